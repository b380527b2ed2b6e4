/// The DA SQL grammar on top of the expression language's parser (`Documentation/DASQL.md`):
///
/// ```
/// query      := select [';']
/// select     := SELECT [DISTINCT | ALL] column (',' column)*
///               FROM table (join)*
///               [WHERE or] [GROUP BY or (',' or)*] [HAVING or]
///               [ORDER BY or [ASC | DESC] (',' …)*] [LIMIT or] [OFFSET or]
/// column     := '*' | name '.' '*' | or [[AS] name]
/// table      := name [[AS] name]
/// join       := [INNER | LEFT [OUTER]] JOIN table ON or
/// ```
/// and, in expressions, `name.name`, `COUNT(*)`, `COUNT|SUM|AVG|MIN|MAX([DISTINCT] or)`,
/// `or [NOT] IN (select)` and `EXISTS (select)`.
extension ExpressionParser {
    /// Parses the whole text as one `SELECT`.
    mutating func parseQuery() throws -> SelectStatement {
        var lexer = ExpressionLexer(text: text, grammar: .query)
        tokens = try lexer.tokens()
        index = 0
        guard isKeyword("SELECT") else {
            throw error(current.kind == .end ? "the query is empty" : "a DA SQL query starts with SELECT, not \(describe(current))",
                        at: current.offset)
        }
        let statement = try parseSelect()
        if acceptSymbol(";"), current.kind != .end {
            throw error("DA SQL runs one statement: nothing may follow ';'", at: current.offset)
        }
        guard current.kind == .end else {
            if isKeyword("UNION") { throw error("UNION is not part of DA SQL; run the queries one by one", at: current.offset) }
            throw error("unexpected \(describe(current)) after the query", at: current.offset)
        }
        return statement
    }

    /// `SELECT …` up to where the statement ends (the end of the text or a subquery's `)`).
    mutating func parseSelect() throws -> SelectStatement {
        _ = acceptKeyword("SELECT")
        let distinct = acceptKeyword("DISTINCT") != nil
        if !distinct { _ = acceptKeyword("ALL") }
        var columns = [try parseSelectColumn()]
        while acceptSymbol(",") { columns.append(try parseSelectColumn()) }
        guard acceptKeyword("FROM") != nil else {
            throw error("expected FROM after the select list, found \(describe(current))", at: current.offset)
        }
        var statement = SelectStatement(distinct: distinct, columns: columns, from: try parseQueryTable())
        while let kind = try parseJoinKind() {
            let table = try parseQueryTable()
            guard acceptKeyword("ON") != nil else {
                throw error("expected ON and a condition after JOIN \(table.name), found \(describe(current))", at: current.offset)
            }
            statement.joins.append(Join(kind: kind, table: table, condition: try parseClause()))
        }
        if acceptKeyword("WHERE") != nil { statement.filter = try parseClause() }
        if acceptKeyword("GROUP") != nil {
            try expectKeyword("BY", after: "GROUP")
            statement.groupBy = [try parseClause()]
            while acceptSymbol(",") { statement.groupBy.append(try parseClause()) }
        }
        if acceptKeyword("HAVING") != nil { statement.having = try parseClause() }
        if acceptKeyword("ORDER") != nil {
            try expectKeyword("BY", after: "ORDER")
            repeat {
                let position = current.offset
                let expression = try parseClause()
                let descending = acceptKeyword("DESC") != nil
                if !descending { _ = acceptKeyword("ASC") }
                statement.orderBy.append(OrderItem(expression: expression, descending: descending, position: position))
            } while acceptSymbol(",")
        }
        if acceptKeyword("LIMIT") != nil {
            statement.limitPosition = current.offset
            statement.limit = try parseClause()
        }
        if acceptKeyword("OFFSET") != nil {
            statement.offsetPosition = current.offset
            statement.offset = try parseClause()
        }
        return statement
    }

    /// `(` already read and `SELECT` next: the subquery and its `)`.
    mutating func parseSubquery(at offset: Int) throws -> SelectStatement {
        try enterNesting(at: offset)
        defer { nesting -= 1 }
        let statement = try parseSelect()
        try expectSymbol(")", after: "the subquery")
        return statement
    }

    /// `COUNT(*)`, `SUM([DISTINCT] x)`, …; nil when `name` is not an aggregate called here.
    mutating func parseAggregate(_ name: String, at offset: Int) throws -> ExpressionNode? {
        guard let function = AggregateFunction(rawValue: name.uppercased()), acceptSymbol("(") else { return nil }
        try enterNesting(at: offset)
        defer { nesting -= 1 }
        if acceptSymbol("*") {
            guard function == .count else { throw error("\(function.rawValue)(*) is not SQL; name a field", at: offset) }
            try expectSymbol(")", after: "COUNT(*")
            return .aggregate(.count, nil, distinct: false, offset: offset)
        }
        let distinct = acceptKeyword("DISTINCT") != nil
        let argument = try parseOr()
        if current.kind == .symbol(",") { throw error("\(function.rawValue) takes one argument", at: current.offset) }
        try expectSymbol(")", after: "the argument of \(function.rawValue)")
        return .aggregate(function, argument, distinct: distinct, offset: offset)
    }

    private mutating func parseSelectColumn() throws -> SelectColumn {
        let start = current.offset
        if acceptSymbol("*") { return .all(qualifier: nil, offset: start) }
        if case .identifier(let qualifier, _) = current.kind, tokens[index + 1].kind == .symbol("."), tokens[index + 2].kind == .symbol("*") {
            index += 3
            return .all(qualifier: qualifier, offset: start)
        }
        let expression = try parseClause()
        return .expression(expression, alias: try parseAlias(), offset: start)
    }

    private mutating func parseQueryTable() throws -> QueryTable {
        let token = current
        guard case .identifier(let name, let quoted) = token.kind, quoted || !isReserved(name.uppercased()) else {
            throw error("expected a table name, found \(describe(token))", at: token.offset)
        }
        index += 1
        if current.kind == .symbol(".") {
            throw error("a table is named by its schema name alone (no '\(name).' before it)", at: current.offset)
        }
        return QueryTable(name: name, alias: try parseAlias(), offset: token.offset)
    }

    /// `AS name`, or a name right after (one that is not a keyword).
    private mutating func parseAlias() throws -> String? {
        let explicit = acceptKeyword("AS") != nil
        guard case .identifier(let name, let quoted) = current.kind, quoted || !isReserved(name.uppercased()) else {
            if explicit { throw error("expected a name after AS, found \(describe(current))", at: current.offset) }
            return nil
        }
        index += 1
        return name
    }

    private mutating func parseJoinKind() throws -> Join.Kind? {
        if current.kind == .symbol(",") {
            throw error("join tables with JOIN … ON …, not a comma", at: current.offset)
        }
        if acceptKeyword("JOIN") != nil { return .inner }
        if acceptKeyword("INNER") != nil {
            try expectKeyword("JOIN", after: "INNER")
            return .inner
        }
        if acceptKeyword("LEFT") != nil {
            _ = acceptKeyword("OUTER")
            try expectKeyword("JOIN", after: "LEFT")
            return .left
        }
        for unsupported in ["RIGHT", "FULL", "CROSS", "NATURAL"] where isKeyword(unsupported) {
            throw error("\(unsupported) joins are not part of DA SQL (INNER and LEFT are)", at: current.offset)
        }
        return nil
    }

    /// One expression of a clause, checked for depth.
    private mutating func parseClause() throws -> ExpressionNode {
        let node = try parseOr()
        try checkDepth(of: node)
        return node
    }

    private mutating func expectKeyword(_ keyword: String, after what: String) throws {
        guard acceptKeyword(keyword) != nil else {
            throw error("expected \(keyword) after \(what), found \(describe(current))", at: current.offset)
        }
    }
}

/// A DA SQL query checked against a catalog: every table and field known, every field
/// reference qualified with its table's name in the query and its exact field name, stars
/// expanded, `ORDER BY` names and positions replaced by their columns, the columns named
/// and typed. The in-memory engine and the SQL compilers start from this, never from text.
package struct ResolvedQuery: Sendable {
    /// A column of the answer.
    package struct Column: Sendable, Hashable {
        package var name: String
        package var type: DataType
    }

    package var statement: SelectStatement
    package var columns: [Column]
    /// Whether the answer has one row per group (`GROUP BY`, an aggregate, or `HAVING`).
    package var isAggregate: Bool
    /// Each source's table, in the order of `FROM` and the joins.
    package var tables: [QueryCatalog.Table]
}

extension DASQLQuery {
    /// Checks the query against a catalog with the values its parameters will have.
    ///
    /// - Throws: ``RelataError`` — `unknownTable` / `unknownField` naming what is missing (with
    ///   "did you mean"), `querySyntax` for what SQL forbids (an aggregate in `WHERE`, a field
    ///   neither grouped nor aggregated, …), `expressionEvaluation` for a missing parameter;
    ///   each with the line and column.
    package func resolved(in catalog: QueryCatalog, parameters: [String: Value]) throws -> ResolvedQuery {
        try QueryResolver(catalog: catalog, text: text, parameters: parameters).resolve(statement, outer: [])
    }
}

struct QueryResolver {
    let catalog: QueryCatalog
    let text: String
    let parameters: [String: Value]

    /// The tables of one `SELECT`, as the query calls them.
    struct Scope {
        var sources: [(name: String, table: QueryCatalog.Table)] = []

        func source(named name: String) -> (name: String, table: QueryCatalog.Table)? {
            sources.first { $0.name.equalsIgnoringCase(name) }
        }
    }

    /// Where an expression stands, for what it may hold.
    enum Clause: String {
        case join = "JOIN … ON", filter = "WHERE", groupBy = "GROUP BY", column = "the select list", having = "HAVING",
             orderBy = "ORDER BY", limit = "LIMIT", offset = "OFFSET"

        var allowsAggregates: Bool { self == .column || self == .having || self == .orderBy }
    }

    func resolve(_ statement: SelectStatement, outer: [Scope]) throws -> ResolvedQuery {
        var result = statement
        var scope = Scope()
        var tables: [QueryCatalog.Table] = []
        for (index, reference) in ([statement.from] + statement.joins.map(\.table)).enumerated() {
            guard let table = catalog.table(named: reference.name) else {
                let suggestion = Spelling.closest(to: reference.name, among: catalog.names).map { " (did you mean \($0)?)" } ?? ""
                throw error(.unknownTable, "no table '\(reference.name)'\(suggestion)", at: reference.offset, table: reference.name)
            }
            let name = reference.alias ?? table.name
            if scope.source(named: name) != nil {
                throw error(.querySyntax, "the query calls two tables '\(name)'; give one another name (… AS other)", at: reference.offset)
            }
            scope.sources.append((name, table))
            tables.append(table)
            let exact = QueryTable(name: table.name, alias: reference.alias, offset: reference.offset)
            if index == 0 { result.from = exact } else { result.joins[index - 1].table = exact }
            if index > 0 {
                // ON sees the tables joined so far.
                result.joins[index - 1].condition = try expression(statement.joins[index - 1].condition, in: outer + [scope], clause: .join)
            }
        }
        let scopes = outer + [scope]
        result.filter = try statement.filter.map { try expression($0, in: scopes, clause: .filter) }
        result.groupBy = try statement.groupBy.map { try expression($0, in: scopes, clause: .groupBy) }

        var columns: [SelectColumn] = []
        for column in statement.columns {
            switch column {
            case .all(let qualifier, let offset):
                let sources = try qualifier.map { name in
                    guard let source = scope.source(named: name) else { throw unknownScope(name, in: scopes, at: offset) }
                    return [source]
                } ?? scope.sources
                for source in sources {
                    columns += source.table.fields.map { .expression(.qualifiedField(qualifier: source.name, name: $0.name, offset: offset), alias: nil, offset: offset) }
                }
            case .expression(let node, let alias, let offset):
                columns.append(.expression(try expression(node, in: scopes, clause: .column), alias: alias, offset: offset))
            }
        }
        result.columns = columns
        result.having = try statement.having.map { try expression($0, in: scopes, clause: .having) }
        let outputs: [(node: ExpressionNode, name: String?)] = columns.map {
            guard case .expression(let node, let alias, _) = $0 else { return (.literal(.null), nil) }
            if let alias { return (node, alias) }
            if case .qualifiedField(_, let name, _) = node { return (node, name) }
            return (node, nil)
        }
        result.orderBy = try statement.orderBy.map { item in
            var item = item
            switch item.expression {
            case .literal(.integer(let position)):
                guard position >= 1, position <= outputs.count else {
                    throw error(.querySyntax, "ORDER BY \(position) names no column (the query has \(outputs.count))", at: item.position)
                }
                item.expression = outputs[Int(position) - 1].node
            case .field(let name, _) where outputs.contains(where: { $0.name?.equalsIgnoringCase(name) == true }):
                item.expression = outputs.first { $0.name?.equalsIgnoringCase(name) == true }!.node
            default:
                item.expression = try expression(item.expression, in: scopes, clause: .orderBy)
            }
            if statement.distinct, !outputs.contains(where: { $0.node.sameExpression(as: item.expression) }) {
                throw error(.querySyntax, "with SELECT DISTINCT, ORDER BY uses the columns selected", at: item.position)
            }
            return item
        }
        result.limit = try statement.limit.map { try count($0, clause: .limit, at: statement.limitPosition) }
        result.offset = try statement.offset.map { try count($0, clause: .offset, at: statement.offsetPosition) }

        let isAggregate = result.isAggregate
        if isAggregate {
            for node in outputs.map(\.node) + [result.having].compactMap({ $0 }) + result.orderBy.map(\.expression) {
                try checkGrouped(node, by: result.groupBy, level: scope)
            }
        }

        var named: [ResolvedQuery.Column] = []
        for (index, output) in outputs.enumerated() {
            let name = output.name ?? "Column\(index + 1)"
            if named.contains(where: { $0.name.equalsIgnoringCase(name) }) {
                throw error(.querySyntax, "two columns are called '\(name)'; name one with AS", at: columns[index].offset)
            }
            named.append(ResolvedQuery.Column(name: name, type: type(of: output.node, in: scopes)))
        }
        return ResolvedQuery(statement: result, columns: named, isAggregate: isAggregate, tables: tables)
    }

    // MARK: Expressions

    /// The expression with its names resolved, checked for where it stands.
    func expression(_ node: ExpressionNode, in scopes: [Scope], clause: Clause, insideAggregate: Bool = false) throws -> ExpressionNode {
        switch node {
        case .field(let name, let offset):
            for scope in scopes.reversed() {
                let matches = scope.sources.filter { $0.table.field(named: name) != nil }
                if matches.count > 1 {
                    throw error(.querySyntax, "'\(name)' is a field of \(matches.map(\.name).joined(separator: " and ")); say which (\(matches[0].name).\(name))", at: offset)
                }
                if let source = matches.first, let field = source.table.field(named: name) {
                    return .qualifiedField(qualifier: source.name, name: field.name, offset: offset)
                }
            }
            let known = scopes.flatMap { $0.sources.flatMap { $0.table.fields.map(\.name) } }
            let suggestion = Spelling.closest(to: name, among: known).map { " (did you mean \($0)?)" } ?? ""
            let tables = scopes.last?.sources.map(\.name).joined(separator: ", ") ?? ""
            throw error(.unknownField, "no field '\(name)' in \(tables)\(suggestion)", at: offset, field: name)
        case .qualifiedField(let qualifier, let name, let offset):
            guard let source = scopes.reversed().lazy.compactMap({ $0.source(named: qualifier) }).first else {
                throw unknownScope(qualifier, in: scopes, at: offset)
            }
            guard let field = source.table.field(named: name) else {
                let suggestion = Spelling.closest(to: name, among: source.table.fields.map(\.name)).map { " (did you mean \($0)?)" } ?? ""
                let called = source.name == source.table.name ? source.name : "\(source.table.name) (\(source.name))"
                throw error(.unknownField, "\(called) has no field '\(name)'\(suggestion)", at: offset, table: source.table.name, field: name)
            }
            return .qualifiedField(qualifier: source.name, name: field.name, offset: offset)
        case .parameter(let name, let offset):
            guard parameters[name] != nil else {
                let given = parameters.keys.sorted().map { ":" + $0 }.joined(separator: ", ")
                throw error(.expressionEvaluation, "no value was given for parameter :\(name) (given: \(given.isEmpty ? "none" : given))", at: offset)
            }
            return node
        case .aggregate(let function, let argument, let distinct, let offset):
            guard clause.allowsAggregates else { throw error(.querySyntax, "\(function.rawValue) cannot stand in \(clause.rawValue)", at: offset) }
            guard !insideAggregate else { throw error(.querySyntax, "\(function.rawValue) cannot stand inside another aggregate", at: offset) }
            let resolved = try argument.map { try expression($0, in: scopes, clause: clause, insideAggregate: true) }
            return .aggregate(function, resolved, distinct: distinct, offset: offset)
        case .function(let name, let arguments, let offset):
            guard let function = ExpressionFunction(rawValue: name) else {
                let known = ExpressionFunction.allCases.map(\.rawValue) + AggregateFunction.allCases.map(\.rawValue)
                let suggestion = Spelling.closest(to: name, among: known).map { " (did you mean \($0)?)" } ?? ""
                throw error(.querySyntax, "no function \(name)\(suggestion)", at: offset)
            }
            guard function.arity.contains(arguments.count) else {
                throw error(.querySyntax, "\(name) takes \(function.arityDescription) arguments, not \(arguments.count)", at: offset)
            }
            return .function(name, try arguments.map { try expression($0, in: scopes, clause: clause, insideAggregate: insideAggregate) }, offset: offset)
        case .inQuery(let operand, let query, let negated, let offset):
            let subquery = try resolve(query, outer: scopes)
            guard subquery.columns.count == 1 else {
                throw error(.querySyntax, "the subquery after IN must select one column, not \(subquery.columns.count)", at: offset)
            }
            return .inQuery(try expression(operand, in: scopes, clause: clause, insideAggregate: insideAggregate), subquery.statement,
                            negated: negated, offset: offset)
        case .exists(let query, let offset):
            return .exists(try resolve(query, outer: scopes).statement, offset: offset)
        default:
            return try node.mappingChildren { try expression($0, in: scopes, clause: clause, insideAggregate: insideAggregate) }
        }
    }

    /// In a query with groups, a field of this query's tables outside an aggregate must be (in)
    /// an expression of `GROUP BY`: every row of a group has its value.
    func checkGrouped(_ node: ExpressionNode, by groups: [ExpressionNode], level: Scope) throws {
        if groups.contains(where: { $0.sameExpression(as: node) }) { return }
        switch node {
        case .aggregate: return
        case .qualifiedField(let qualifier, let name, let offset) where level.source(named: qualifier) != nil:
            throw error(.querySyntax, "\(qualifier).\(name) is neither in GROUP BY nor inside an aggregate", at: offset)
        case .inQuery(let operand, _, _, _):
            try checkGrouped(operand, by: groups, level: level)
        default:
            for child in node.children { try checkGrouped(child, by: groups, level: level) }
        }
    }

    /// `LIMIT` and `OFFSET`: a whole number, not negative, written or given as a parameter.
    func count(_ node: ExpressionNode, clause: Clause, at offset: Int) throws -> ExpressionNode {
        let value: Value
        switch node {
        case .literal(let literal): value = literal
        case .parameter(let name, _):
            _ = try expression(node, in: [], clause: clause)
            value = parameters[name] ?? .null
        default: throw error(.querySyntax, "\(clause.rawValue) takes a number or a parameter", at: offset)
        }
        guard let count = value.integerValue, count >= 0 else {
            throw error(.querySyntax, "\(clause.rawValue) must be a whole number from 0, not \(value.kindName) \(value)", at: offset)
        }
        return .literal(.integer(count))
    }

    func unknownScope(_ name: String, in scopes: [Scope], at offset: Int) -> RelataError {
        let known = scopes.flatMap { $0.sources.map(\.name) }
        let suggestion = Spelling.closest(to: name, among: known).map { " (did you mean \($0)?)" } ?? ""
        return error(.unknownTable, "the query has no table called '\(name)'\(suggestion)", at: offset, table: name)
    }

    func error(_ code: RelataError.Code, _ message: String, at offset: Int, table: String? = nil, field: String? = nil) -> RelataError {
        RelataError(code, message, table: table, field: field, location: ExpressionParser.location(of: offset, in: text, alwaysNamingTheLine: true))
    }

    // MARK: Types

    /// The type of a column of the answer.
    func type(of node: ExpressionNode, in scopes: [Scope]) -> DataType {
        switch node {
        case .qualifiedField(let qualifier, let name, _):
            let source = scopes.reversed().lazy.compactMap { $0.source(named: qualifier) }.first
            return source?.table.field(named: name)?.type ?? .string
        case .literal(let value): return Self.type(of: value)
        case .parameter(let name, _): return Self.type(of: parameters[name] ?? .null)
        case .negate(let operand, _): return type(of: operand, in: scopes)
        case .binary(.concatenate, _, _, _): return .string
        case .binary(let op, let left, let right, _) where !op.isComparison && op != .and && op != .or:
            let types = [type(of: left, in: scopes), type(of: right, in: scopes)].map(\.storage)
            if types.contains(.string) { return .string }
            if types.contains(.decimal) { return .decimal }
            if types.contains(.double) || op == .divide { return .float }
            return types.allSatisfy { $0 == .integer } ? .largeInt : .string
        case .function(let name, let arguments, _):
            switch ExpressionFunction(rawValue: name) {
            case .upper, .lower, .trim, .substring: return .string
            case .length, .len, .year, .month, .day: return .largeInt
            case .abs, .round, .coalesce: return arguments.first.map { type(of: $0, in: scopes) } ?? .string
            case nil: return .string
            }
        case .aggregate(let function, let argument, _, _):
            let argumentType = argument.map { type(of: $0, in: scopes) } ?? .largeInt
            switch function {
            case .count: return .largeInt
            case .sum: return argumentType.storage == .integer ? .largeInt : argumentType.storage == .decimal ? .decimal : .float
            case .average: return argumentType.storage == .decimal ? .decimal : .float
            case .minimum, .maximum: return argumentType
            }
        default: return .boolean
        }
    }

    static func type(of value: Value) -> DataType {
        switch value {
        case .integer: .largeInt
        case .double: .float
        case .decimal: .decimal
        case .boolean: .boolean
        case .date: .dateTime
        case .guid: .guid
        case .blob: .blob
        case .string, .null: .string
        }
    }
}

extension ExpressionNode {
    /// Whether two expressions are the same but for where they were written.
    package func sameExpression(as other: ExpressionNode) -> Bool {
        withoutPositions == other.withoutPositions
    }

    /// The expression with every position 0.
    var withoutPositions: ExpressionNode {
        let node = mappingChildren(\.withoutPositions)
        switch node {
        case .field(let name, _): return .field(name, offset: 0)
        case .parameter(let name, _): return .parameter(name, offset: 0)
        case .negate(let operand, _): return .negate(operand, offset: 0)
        case .binary(let op, let left, let right, _): return .binary(op, left, right, offset: 0)
        case .like(let operand, let pattern, let escape, let negated, _): return .like(operand, pattern: pattern, escape: escape, negated: negated, offset: 0)
        case .function(let name, let arguments, _): return .function(name, arguments, offset: 0)
        case .qualifiedField(let qualifier, let name, _): return .qualifiedField(qualifier: qualifier, name: name, offset: 0)
        case .aggregate(let function, let argument, let distinct, _): return .aggregate(function, argument, distinct: distinct, offset: 0)
        case .inQuery(let operand, let query, let negated, _): return .inQuery(operand, query, negated: negated, offset: 0)
        case .exists(let query, _): return .exists(query, offset: 0)
        case .literal, .not, .isNull, .inList, .between: return node
        }
    }
}

extension SelectColumn {
    var offset: Int {
        switch self {
        case .all(_, let offset), .expression(_, _, let offset): offset
        }
    }
}

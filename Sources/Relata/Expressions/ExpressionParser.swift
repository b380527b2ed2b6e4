/// A recursive-descent parser for the expression language.
///
/// ```
/// or         := and (OR and)*
/// and        := not (AND not)*
/// not        := NOT not | predicate
/// predicate  := sum [comparison sum | [NOT] IN (list) | [NOT] LIKE sum [ESCAPE 'c']
///                    | [NOT] BETWEEN sum AND sum | IS [NOT] NULL]
/// sum        := product ((+ | - | '||') product)*
/// product    := unary ((* | / | %) unary)*
/// unary      := - unary | primary
/// primary    := literal | :parameter | field | function '(' args ')' | '(' or ')'
/// ```
struct ExpressionParser {
    /// How deep an expression's tree may be — chains of operators nest it one level per link —
    /// so that compiling and evaluating, which recurse, stay far from the end of any thread's stack.
    static let maximumDepth = 256
    /// How many parentheses, `NOT`s, signs and function calls may be open at once (the parser
    /// recurses through every grammar rule for each).
    static let maximumNesting = 64

    let text: String
    let grammar: ExpressionGrammar
    var tokens: [ExpressionToken] = []
    var index = 0
    /// Parentheses, `NOT`s, signs, calls and subqueries open around the current token.
    var nesting = 0

    init(text: String, grammar: ExpressionGrammar = .expression) {
        self.text = text
        self.grammar = grammar
    }

    mutating func parseExpression() throws -> ExpressionNode {
        var lexer = ExpressionLexer(text: text, grammar: grammar)
        tokens = try lexer.tokens()
        index = 0
        if tokens[0].kind == .end { throw error("the expression is empty", at: 0) }
        let node = try parseOr()
        guard current.kind == .end else { throw error("unexpected \(describe(current)); expected an operator or the end", at: current.offset) }
        try checkDepth(of: node)
        return node
    }

    /// Refuses a tree deeper than ``maximumDepth`` (measured without recursion).
    /// A subquery's expressions count from the depth of the node holding it, so walks that
    /// enter subqueries are bounded too.
    func checkDepth(of root: ExpressionNode) throws {
        var pending = [(node: root, depth: 1)]
        while let (node, depth) = pending.popLast() {
            guard depth <= Self.maximumDepth else {
                throw error("the expression nests more than \(Self.maximumDepth) levels deep (a long chain of operators nests too; "
                            + "use IN (…) for a long list of alternatives)", at: 0)
            }
            pending += node.children.map { ($0, depth + 1) }
            switch node {
            case .inQuery(_, let query, _, _), .exists(let query, _): pending += query.expressions.map { ($0, depth + 1) }
            default: break
            }
        }
    }

    mutating func enterNesting(at offset: Int) throws {
        nesting += 1
        if nesting > Self.maximumNesting {
            throw error("the expression nests more than \(Self.maximumNesting) parentheses, NOTs, signs or calls deep", at: offset)
        }
    }

    // MARK: Grammar

    mutating func parseOr() throws -> ExpressionNode {
        var node = try parseAnd()
        while let offset = acceptKeyword("OR") {
            node = .binary(.or, node, try parseAnd(), offset: offset)
        }
        return node
    }

    private mutating func parseAnd() throws -> ExpressionNode {
        var node = try parseNot()
        while let offset = acceptKeyword("AND") {
            node = .binary(.and, node, try parseNot(), offset: offset)
        }
        return node
    }

    private mutating func parseNot() throws -> ExpressionNode {
        if let offset = acceptKeyword("NOT") {
            try enterNesting(at: offset)
            defer { nesting -= 1 }
            return .not(try parseNot())
        }
        return try parsePredicate()
    }

    private mutating func parsePredicate() throws -> ExpressionNode {
        let left = try parseSum()
        if case .symbol(let symbol) = current.kind, let op = Self.comparisons[symbol] {
            let offset = current.offset
            index += 1
            return .binary(op, left, try parseSum(), offset: offset)
        }
        if acceptKeyword("IS") != nil {
            let negated = acceptKeyword("NOT") != nil
            guard acceptKeyword("NULL") != nil else { throw error("expected NULL after IS\(negated ? " NOT" : "")", at: current.offset) }
            return .isNull(left, negated: negated)
        }
        let notOffset = current.offset
        let negated = acceptKeyword("NOT") != nil
        if let inOffset = acceptKeyword("IN") {
            try expectSymbol("(", after: "IN")
            if grammar == .query, isKeyword("SELECT") {
                let query = try parseSubquery(at: inOffset)
                return .inQuery(left, query, negated: negated, offset: inOffset)
            }
            var list = [try parseSum()]
            while acceptSymbol(",") { list.append(try parseSum()) }
            try expectSymbol(")", after: "the IN list")
            return .inList(left, list, negated: negated)
        }
        if let offset = acceptKeyword("LIKE") {
            let pattern = try parseSum()
            var escape: Character?
            if acceptKeyword("ESCAPE") != nil {
                guard case .string(let text) = current.kind, text.count == 1 else {
                    throw error("expected a one-character string after ESCAPE", at: current.offset)
                }
                escape = text.first
                index += 1
            }
            return .like(left, pattern: pattern, escape: escape, negated: negated, offset: offset)
        }
        if acceptKeyword("BETWEEN") != nil {
            let low = try parseSum()
            guard acceptKeyword("AND") != nil else { throw error("expected AND in BETWEEN … AND …", at: current.offset) }
            return .between(left, low: low, high: try parseSum(), negated: negated)
        }
        if negated { throw error("expected IN, LIKE or BETWEEN after NOT", at: notOffset) }
        return left
    }

    private mutating func parseSum() throws -> ExpressionNode {
        var node = try parseProduct()
        while case .symbol(let symbol) = current.kind, let op = ["+": BinaryOperator.add, "-": .subtract, "||": .concatenate][symbol] {
            let offset = current.offset
            index += 1
            node = .binary(op, node, try parseProduct(), offset: offset)
        }
        return node
    }

    private mutating func parseProduct() throws -> ExpressionNode {
        var node = try parseUnary()
        while case .symbol(let symbol) = current.kind, let op = ["*": BinaryOperator.multiply, "/": .divide, "%": .remainder][symbol] {
            let offset = current.offset
            index += 1
            node = .binary(op, node, try parseUnary(), offset: offset)
        }
        return node
    }

    private mutating func parseUnary() throws -> ExpressionNode {
        let offset = current.offset
        if acceptSymbol("-") {
            try enterNesting(at: offset)
            defer { nesting -= 1 }
            let operand = try parseUnary()
            switch operand {
            case .literal(.integer(let value)): return .literal(.integer(-value))
            case .literal(.double(let value)): return .literal(.double(-value))
            default: return .negate(operand, offset: offset)
            }
        }
        if acceptSymbol("+") {
            try enterNesting(at: offset)
            defer { nesting -= 1 }
            return try parseUnary()
        }
        return try parsePrimary()
    }

    private mutating func parsePrimary() throws -> ExpressionNode {
        let token = current
        switch token.kind {
        case .number(let value):
            index += 1
            return .literal(value)
        case .string(let value):
            index += 1
            return .literal(.string(value))
        case .parameter(let name):
            index += 1
            return .parameter(name, offset: token.offset)
        case .identifier(let name, let quoted):
            index += 1
            if !quoted {
                switch name.uppercased() {
                case "TRUE": return .literal(.boolean(true))
                case "FALSE": return .literal(.boolean(false))
                case "NULL": return .literal(.null)
                case let keyword where isReserved(keyword):
                    if grammar == .query, keyword == "EXISTS" {
                        try expectSymbol("(", after: "EXISTS")
                        return .exists(try parseSubquery(at: token.offset), offset: token.offset)
                    }
                    throw error("unexpected \(keyword); expected a value", at: token.offset)
                default: break
                }
                if grammar == .query, let aggregate = try parseAggregate(name, at: token.offset) { return aggregate }
                if acceptSymbol("(") {
                    try enterNesting(at: token.offset)
                    defer { nesting -= 1 }
                    var arguments: [ExpressionNode] = []
                    if !acceptSymbol(")") {
                        arguments.append(try parseOr())
                        while acceptSymbol(",") { arguments.append(try parseOr()) }
                        try expectSymbol(")", after: "the arguments of \(name)")
                    }
                    return .function(name.uppercased(), arguments, offset: token.offset)
                }
            }
            if grammar == .query, acceptSymbol(".") {
                guard case .identifier(let field, let quotedField) = current.kind, quotedField || !isReserved(field.uppercased()) else {
                    throw error(current.kind == .symbol("*") ? "\(name).* belongs in the select list only"
                                : "expected a field name after '\(name).', found \(describe(current))", at: current.offset)
                }
                index += 1
                return .qualifiedField(qualifier: name, name: field, offset: token.offset)
            }
            return .field(name, offset: token.offset)
        case .symbol("(") where grammar == .query && tokens[index + 1].kind == .identifier("SELECT", quoted: false):
            throw error("a subquery can follow IN or EXISTS only", at: tokens[index + 1].offset)
        case .symbol("("):
            index += 1
            try enterNesting(at: token.offset)
            defer { nesting -= 1 }
            let node = try parseOr()
            try expectSymbol(")", after: "the expression in parentheses")
            return node
        default:
            throw error("unexpected \(describe(token)); expected a value, a field or '('", at: token.offset)
        }
    }

    // MARK: Tokens

    private static let comparisons: [String: BinaryOperator] = [
        "=": .equal, "==": .equal, "<>": .notEqual, "!=": .notEqual,
        "<": .less, "<=": .lessOrEqual, ">": .greater, ">=": .greaterOrEqual,
    ]
    private static let reserved: Set<String> = ["AND", "OR", "NOT", "IN", "LIKE", "BETWEEN", "IS", "ESCAPE"]
    /// Words a DA SQL query reserves beyond the expression language's.
    static let queryKeywords: Set<String> = [
        "SELECT", "DISTINCT", "FROM", "JOIN", "INNER", "LEFT", "RIGHT", "FULL", "OUTER", "CROSS", "NATURAL", "ON", "AS", "WHERE", "GROUP", "BY", "HAVING",
        "ORDER", "ASC", "DESC", "LIMIT", "OFFSET", "EXISTS", "UNION", "ALL",
    ]

    /// Whether an unquoted word is a keyword (not a name) in this grammar.
    func isReserved(_ uppercased: String) -> Bool {
        Self.reserved.contains(uppercased) || (grammar == .query && Self.queryKeywords.contains(uppercased))
    }

    var current: ExpressionToken { tokens[index] }

    func isKeyword(_ keyword: String) -> Bool {
        guard case .identifier(let name, false) = current.kind else { return false }
        return name.uppercased() == keyword
    }

    mutating func acceptKeyword(_ keyword: String) -> Int? {
        guard isKeyword(keyword) else { return nil }
        index += 1
        return tokens[index - 1].offset
    }

    mutating func acceptSymbol(_ symbol: String) -> Bool {
        guard current.kind == .symbol(symbol) else { return false }
        index += 1
        return true
    }

    mutating func expectSymbol(_ symbol: String, after what: String) throws {
        guard acceptSymbol(symbol) else {
            throw error("expected '\(symbol)' after \(what), found \(describe(current))", at: current.offset)
        }
    }

    func describe(_ token: ExpressionToken) -> String {
        switch token.kind {
        case .number(let value): return "number \(value)"
        case .string(let value): return "string '\(value)'"
        case .identifier(let name, _): return "'\(name)'"
        case .parameter(let name): return "parameter :\(name)"
        case .symbol(let symbol): return "'\(symbol)'"
        case .end: return grammar == .query ? "the end of the query" : "the end of the expression"
        }
    }

    func error(_ message: String, at offset: Int) -> RelataError {
        Self.syntaxError(message, at: offset, in: text, grammar: grammar)
    }

    /// A syntax error whose location is `column N` (or `line L, column N` in multi-line text);
    /// a query's always names the line (`line 1, column 8`). A query is not repeated in the message.
    static func syntaxError(_ message: String, at offset: Int, in text: String, grammar: ExpressionGrammar = .expression) -> RelataError {
        switch grammar {
        case .expression:
            return RelataError(.expressionSyntax, "\(message) in \"\(text)\"", location: location(of: offset, in: text))
        case .query:
            return RelataError(.querySyntax, message, location: location(of: offset, in: text, alwaysNamingTheLine: true))
        }
    }

    static func location(of offset: Int, in text: String, alwaysNamingTheLine: Bool = false) -> String {
        let before = text.prefix(offset)
        let line = before.filter { $0 == "\n" }.count + 1
        let column = offset - (before.lastIndex(of: "\n").map { before.distance(from: before.startIndex, to: $0) + 1 } ?? 0) + 1
        return line == 1 && !alwaysNamingTheLine ? "column \(column)" : "line \(line), column \(column)"
    }
}

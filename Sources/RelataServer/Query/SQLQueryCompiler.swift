import Relata

/// A checked DA SQL query as one SQL statement for a storage's database, with bound
/// arguments, read back as the answer's columns.
struct CompiledQuery {
    let sql: String
    let arguments: [Value]
    /// The answer's columns, as the fields its SQL columns are read as.
    let columns: [FieldDefinition]
}

/// Compiles a checked DA SQL query to the storage's SQL dialect — but only where the
/// database gives exactly DA SQL's answer. Names become the stored tables and columns
/// (behind aliases the compiler makes, so no name of the query reaches the SQL), every
/// value is a bound argument, and each operation is compiled only for the kinds of
/// value the database treats as Relata does:
///
/// - comparisons, `IN`, `BETWEEN`, `MIN`/`MAX` and `ORDER BY` of integers, floats,
///   booleans and strings (by code point: `COLLATE "C"` on PostgreSQL, SQLite's BINARY),
///   plus decimals and dates on PostgreSQL (SQLite holds them as text); GUIDs for
///   equality; NULLs first ascending and last descending, spelled out;
/// - `+ - *` on floats, and on decimals (and an integer beside one) on PostgreSQL; `/` on
///   floats, by zero NULL; `||` on strings; `COALESCE`, `ABS` of floats and decimals, `YEAR`,
///   `MONTH`, `DAY`. Not integer arithmetic: an overflow fails a query in Relata, but whether a
///   database meets it depends on its plan (SQLite goes on in floating point);
/// - `COUNT`, `SUM` of integers (an overflow fails on both), `AVG` of integers (a float,
///   as the sum over the count).
///
/// `LIKE` compiles for SQLite as `relata_like`, a function the server gives SQLite that runs
/// Relata's own matcher.
///
/// Anything else — `LIKE` on PostgreSQL (Relata folds case across Unicode), string functions,
/// integer `/` and `%`, values of different kinds — is ``NotExact``, and the server
/// answers the query with the in-memory engine instead (``QueryReader``): the same answer,
/// computed by the code every other site runs.
struct SQLQueryCompiler {
    /// Why a query is not compiled (for logs and tests).
    struct NotExact: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    typealias Kind = ValueKind

    let storage: SQLStorage
    let parameters: [String: Value]
    private var dialect: any SQLDialect { storage.dialect }
    private var isPostgres: Bool { dialect is PostgresDialect }

    private var arguments: [Value] = []
    /// Each argument's index, by its kind and exact bytes, so a value used twice (a parameter in
    /// the select list and in `GROUP BY`) is one placeholder and the database sees one expression.
    private var argumentIndex: [[UInt8]: Int] = [:]
    /// The tables in scope, innermost `SELECT` last: what the query calls each, its alias in the
    /// SQL, and its definition.
    private var scopes: [[(name: String, alias: String, table: QueryCatalog.Table)]] = []
    private var aliasCount = 0

    init(storage: SQLStorage, parameters: [String: Value]) {
        self.storage = storage
        self.parameters = parameters
    }

    /// The query as SQL, or ``NotExact`` saying what the database would answer differently.
    mutating func compile(_ query: ResolvedQuery) throws -> CompiledQuery {
        let sql = try select(query.statement)
        scopes.append(try sources(of: query.statement))
        defer { scopes.removeLast() }
        for node in query.statement.columnExpressions where try kind(of: node) == .null {
            throw NotExact("a column that is always NULL has no SQL type")
        }
        return CompiledQuery(sql: sql, arguments: arguments, columns: query.fields)
    }

    /// Conditions over one table (all of them must hold) as SQL in which the table is called
    /// `t1`: what the database keeps is exactly the rows for which DA SQL finds them true.
    mutating func condition(_ conditions: [ExpressionNode], over table: QueryCatalog.Table, calledBy name: String) throws -> (sql: String, arguments: [Value]) {
        scopes = [[(name, "t1", table)]]
        aliasCount = 1
        defer { scopes = [] }
        let sql = try conditions.map { try condition($0) }.joined(separator: " AND ")
        return (sql, arguments)
    }

    // MARK: Statements

    private mutating func select(_ statement: SelectStatement) throws -> String {
        scopes.append([])
        defer { scopes.removeLast() }
        var sources = try sources(of: statement)
        for index in sources.indices {
            aliasCount += 1
            sources[index].alias = "t\(aliasCount)"
        }
        // Every table is in scope from the start (the checks already refused a name used before
        // its JOIN); the clauses compile in the order they are written, so arguments are numbered
        // in the order their placeholders stand.
        var columns: [String] = []
        scopes[scopes.count - 1] = sources
        for node in statement.columnExpressions {
            // DISTINCT tells values apart as the database compares them: exact only where that is Relata's way.
            if statement.distinct, case let kind = try kind(of: node), !isComparable(kind) { throw NotExact("DISTINCT on a \(kind) value") }
            columns.append(try value(node))
        }
        var sql = "SELECT \(statement.distinct ? "DISTINCT " : "")\(columns.joined(separator: ", "))"
        sql += " FROM \(storage.sqlTable(sources[0].table.name)) AS \(sources[0].alias)"
        for (index, join) in statement.joins.enumerated() {
            let source = sources[index + 1]
            sql += " \(join.kind == .left ? "LEFT" : "INNER") JOIN \(storage.sqlTable(source.table.name)) AS \(source.alias)"
            sql += " ON \(try condition(join.condition))"
        }
        if let filter = statement.filter { sql += " WHERE \(try condition(filter))" }
        if !statement.groupBy.isEmpty {
            sql += " GROUP BY " + (try statement.groupBy.map { node -> String in
                let kind = try kind(of: node)
                guard isComparable(kind) else { throw NotExact("GROUP BY a \(kind) value") }
                return try value(node)
            }).joined(separator: ", ")
        }
        if let having = statement.having { sql += " HAVING \(try condition(having))" }
        if !statement.orderBy.isEmpty {
            sql += " ORDER BY " + (try statement.orderBy.map { item -> String in
                let key: String
                // A key the select list holds is named by its position: with DISTINCT the database
                // asks for that, and the select list's placeholders are not repeated.
                if let position = statement.columnExpressions.firstIndex(where: { $0.sameExpression(as: item.expression) }) {
                    try requireOrderable(item.expression)
                    key = "\(position + 1)"
                } else {
                    key = try orderKey(item.expression)
                }
                return key + (item.descending ? " DESC NULLS LAST" : " ASC NULLS FIRST")
            }).joined(separator: ", ")
        }
        switch (statement.limit, statement.offset) {
        case (.literal(.integer(let limit))?, .literal(.integer(let offset))?): sql += " LIMIT \(limit) OFFSET \(offset)"
        case (.literal(.integer(let limit))?, nil): sql += " LIMIT \(limit)"
        case (nil, .literal(.integer(let offset))?): sql += isPostgres ? " OFFSET \(offset)" : " LIMIT -1 OFFSET \(offset)"
        case (nil, nil): break
        default: throw NotExact("LIMIT and OFFSET are checked numbers")
        }
        return sql
    }

    private mutating func orderKey(_ node: ExpressionNode) throws -> String {
        try requireOrderable(node)
        return collated(try value(node), try kind(of: node))
    }

    private func requireOrderable(_ node: ExpressionNode) throws {
        let kind = try kind(of: node)
        guard kind == .null || isOrderable(kind) else { throw NotExact("ORDER BY a \(kind) value") }
    }

    // MARK: Expressions

    /// An expression that must be a condition (`WHERE`, `ON`, `HAVING`, operands of `AND`).
    private mutating func condition(_ node: ExpressionNode) throws -> String {
        let kind = try kind(of: node)
        guard kind == .value(.boolean) || kind == .null else { throw NotExact("a condition of kind \(kind)") }
        return try value(node)
    }

    /// The SQL of an expression DA SQL and the database evaluate alike.
    private mutating func value(_ node: ExpressionNode) throws -> String {
        switch node {
        case .literal(let literal):
            return try bind(literal)
        case .parameter(let name, _):
            guard let given = parameters[name] else { throw NotExact("no value for :\(name)") }
            return try bind(given)
        case .qualifiedField(let qualifier, let name, _):
            let (alias, table) = try source(qualifier)
            return "\(alias).\(storage.sqlColumn(name, of: table.name))"
        case .field:
            throw NotExact("an unqualified field (the query was not checked)")
        case .negate(let operand, _):
            let kind = try kind(of: operand)
            guard kind == .value(.double) || (isPostgres && kind == .value(.decimal)) else { throw NotExact("- on \(kind)") }
            return "(-\(try value(operand)))"
        case .not(let operand):
            return "(NOT \(try condition(operand)))"
        case .binary(.and, let left, let right, _), .binary(.or, let left, let right, _):
            guard case .binary(let op, _, _, _) = node else { return "" }
            return "(\(try condition(left)) \(op.rawValue) \(try condition(right)))"
        case .binary(let op, let left, let right, _) where op.isComparison:
            let (l, r, kind) = try comparable(left, right)
            guard kind == .null || ((op == .equal || op == .notEqual) ? isComparable(kind) : isOrderable(kind)) else {
                throw NotExact("\(op.rawValue) on \(kind)")
            }
            return "(\(l) \(op == .notEqual ? "<>" : op.rawValue) \(r))"
        case .binary(let op, let left, let right, _):
            return try arithmetic(op, left, right)
        case .isNull(let operand, let negated):
            return "(\(try value(operand)) IS \(negated ? "NOT " : "")NULL)"
        case .inList(let operand, let items, let negated):
            let operandKind = try kind(of: operand)
            guard operandKind != .null, isComparable(operandKind) else { throw NotExact("IN on \(operandKind)") }
            let sql = try collated(value(operand), operandKind)
            var list: [String] = []
            for item in items { list.append(try collated(coerced(item, to: operandKind), operandKind)) }
            return "(\(sql) \(negated ? "NOT " : "")IN (\(list.joined(separator: ", "))))"
        case .between(let operand, let low, let high, let negated):
            let operandKind = try kind(of: operand)
            guard operandKind != .null, isOrderable(operandKind) else { throw NotExact("BETWEEN on \(operandKind)") }
            let sql = try collated(value(operand), operandKind)
            let lowSQL = try collated(coerced(low, to: operandKind), operandKind)
            let highSQL = try collated(coerced(high, to: operandKind), operandKind)
            return "(\(negated ? "NOT " : "")(\(sql) BETWEEN \(lowSQL) AND \(highSQL)))"
        case .like(let operand, let pattern, let escape, let negated, _):
            // SQLite runs Relata's own matcher (`relata_like`); PostgreSQL folds case by its collation.
            guard !isPostgres else { throw NotExact("LIKE folds case across Unicode; PostgreSQL folds by its collation") }
            for side in [operand, pattern] {
                let kind = try kind(of: side)
                guard kind == .null || kind == .value(.string) else { throw NotExact("LIKE on \(kind)") }
            }
            let sql = "relata_like(\(try value(operand)), \(try value(pattern)), \(try bind(escape.map { .string(String($0)) } ?? .null)))"
            return negated ? "(NOT \(sql))" : sql
        case .function(let name, let arguments, _):
            return try function(name.uppercased(), arguments)
        case .aggregate(let function, let argument, let distinct, _):
            return try aggregate(function, argument, distinct: distinct)
        case .inQuery(let operand, let query, let negated, _):
            let operandKind = try kind(of: operand)
            guard let column = query.columnExpressions.first else { throw NotExact("a subquery without a column") }
            let sql = try collated(value(operand), operandKind)
            scopes.append(try sources(of: query))
            let columnKind = try kind(of: column)
            scopes.removeLast()
            guard operandKind == columnKind, isComparable(operandKind) else { throw NotExact("\(operandKind) IN a subquery of \(columnKind)") }
            let subquery = try select(query)
            return "(\(sql) \(negated ? "NOT " : "")IN (\(subquery)))"
        case .exists(let query, _):
            return "(EXISTS (\(try select(query))))"
        }
    }

    private mutating func arithmetic(_ op: BinaryOperator, _ left: ExpressionNode, _ right: ExpressionNode) throws -> String {
        let leftKind = try kind(of: left), rightKind = try kind(of: right)
        if isPostgres, [.add, .subtract, .multiply].contains(op), Set([leftKind, rightKind]) == [.value(.decimal), .value(.integer)] {
            // An integer beside a decimal is computed as a decimal, exactly, in Relata and in PostgreSQL.
            let l = leftKind == .value(.integer) ? "CAST(\(try value(left)) AS NUMERIC)" : try value(left)
            let r = rightKind == .value(.integer) ? "CAST(\(try value(right)) AS NUMERIC)" : try value(right)
            return "(\(l) \(op.rawValue) \(r))"
        }
        let (l, r, kind) = try comparable(left, right)
        switch (op, kind) {
        case (.concatenate, .value(.string)), (.add, .value(.string)):
            return "(\(l) || \(r))"
        case (.add, .value(.double)), (.subtract, .value(.double)), (.multiply, .value(.double)):
            return "(\(l) \(op.rawValue) \(r))"
        case (.divide, .value(.double)):
            return "(\(l) / NULLIF(\(r), 0))"
        case (.add, .value(.decimal)), (.subtract, .value(.decimal)), (.multiply, .value(.decimal)):
            guard isPostgres else { throw NotExact("\(op.rawValue) on decimals in SQLite, which holds them as text") }
            return "(\(l) \(op.rawValue) \(r))"
        case (_, .value(.integer)):
            // An integer overflow fails a query in Relata, but whether a database meets it depends on
            // the order it evaluates rows and conditions in (a condition pushed below a join);
            // SQLite does not fail at all, it goes on in floating point.
            throw NotExact("integer \(op.rawValue): where an overflow fails depends on the database's plan")
        default:
            throw NotExact("\(op.rawValue) on \(kind)")
        }
    }

    private mutating func function(_ name: String, _ arguments: [ExpressionNode]) throws -> String {
        switch name {
        case "COALESCE":
            let kinds = try arguments.map { try kind(of: $0) }.filter { $0 != .null }
            guard let first = kinds.first, kinds.allSatisfy({ $0 == first }) else { throw NotExact("COALESCE of different kinds") }
            return "COALESCE(\(try arguments.map { try value($0) }.joined(separator: ", ")))"
        case "ABS":
            let kind = try kind(of: arguments[0])
            // Not of an integer: ABS of the smallest one overflows (see `arithmetic`).
            guard kind == .value(.double) || (isPostgres && kind == .value(.decimal)) else { throw NotExact("ABS of \(kind)") }
            return "ABS(\(try value(arguments[0])))"
        case "YEAR", "MONTH", "DAY":
            guard try kind(of: arguments[0]) == .value(.date) else { throw NotExact("\(name) of a value that is not a date") }
            let date = try value(arguments[0])
            if isPostgres { return "CAST(EXTRACT(\(name) FROM \(date) AT TIME ZONE 'UTC') AS BIGINT)" }
            let format = ["YEAR": "%Y", "MONTH": "%m", "DAY": "%d"][name]!
            return "CAST(strftime('\(format)', \(date)) AS INTEGER)"
        default:
            throw NotExact("\(name) is evaluated by Relata (Unicode and rounding rules differ between databases)")
        }
    }

    private mutating func aggregate(_ function: AggregateFunction, _ argument: ExpressionNode?, distinct: Bool) throws -> String {
        guard let argument else { return "COUNT(*)" }
        let kind = try kind(of: argument)
        let sql = try value(argument)
        let operand = (distinct ? "DISTINCT " : "") + sql
        switch function {
        case .count:
            guard !distinct || isComparable(kind) else { throw NotExact("COUNT(DISTINCT) of \(kind)") }
            return "COUNT(\(operand))"
        case .sum where kind == .value(.integer):
            // PostgreSQL sums bigints as numeric; back in a bigint, an overflow fails as in Relata.
            return isPostgres ? "CAST(SUM(\(operand)) AS BIGINT)" : "SUM(\(operand))"
        case .sum where kind == .value(.decimal) && isPostgres:
            return "SUM(\(operand))"
        case .average where kind == .value(.integer):
            let sum = isPostgres ? "CAST(SUM(\(operand)) AS BIGINT)" : "SUM(\(operand))"
            return "(CAST(\(sum) AS \(isPostgres ? "DOUBLE PRECISION" : "REAL")) / COUNT(\(operand)))"
        case .minimum, .maximum:
            guard isOrderable(kind), !(isPostgres && kind == .value(.boolean)) else { throw NotExact("\(function.rawValue) of \(kind)") }
            return "\(function.rawValue)(\(collated(operand, kind)))"
        default:
            // A float sum depends on the order rows are added in; a decimal average on the division's precision.
            throw NotExact("\(function.rawValue) of \(kind)")
        }
    }

    // MARK: Values

    /// Two operands of one operation: a literal or parameter beside a typed expression takes
    /// that expression's type (as Relata compares `IntField = 2.0` as integers), otherwise both
    /// must be of one kind.
    private mutating func comparable(_ left: ExpressionNode, _ right: ExpressionNode) throws -> (String, String, Kind) {
        let leftKind = try kind(of: left), rightKind = try kind(of: right)
        if leftKind == .null || rightKind == .null {
            let kind = leftKind == .null ? rightKind : leftKind
            return (try collated(value(left), kind), try collated(value(right), kind), kind)
        }
        if isValue(right), !isValue(left) {
            return (try collated(value(left), leftKind), try collated(coerced(right, to: leftKind), leftKind), leftKind)
        }
        if isValue(left), !isValue(right) {
            let l = try collated(coerced(left, to: rightKind), rightKind)
            return (l, try collated(value(right), rightKind), rightKind)
        }
        guard leftKind == rightKind else { throw NotExact("\(leftKind) beside \(rightKind)") }
        return (try collated(value(left), leftKind), try collated(value(right), rightKind), leftKind)
    }

    /// A literal or parameter bound as a value of `kind`; ``NotExact`` when it does not convert exactly.
    private mutating func coerced(_ node: ExpressionNode, to kind: Kind) throws -> String {
        guard isValue(node), case .value(let storage) = kind else {
            guard try self.kind(of: node) == kind || self.kind(of: node) == .null else { throw NotExact("a value of another kind than \(kind)") }
            return try value(node)
        }
        let given: Value
        switch node {
        case .literal(let literal): given = literal
        case .parameter(let name, _): given = parameters[name] ?? .null
        default: return try value(node)
        }
        if given.isNull { return "NULL" }
        let type = FieldDefinition("value", Self.type(for: storage))
        guard Self.comparesAs(given, storage), let converted = try? type.coerced(given), !converted.isNull,
              Self.sameNumber(given, converted) else {
            throw NotExact("\(given.kindName) \(given) beside \(kind)")
        }
        return try bind(converted)
    }

    /// Whether Relata compares a value with one of `storage` by converting it (a number with a
    /// number, a string with a date or GUID it spells) rather than refusing the comparison.
    private static func comparesAs(_ value: Value, _ storage: DataType.Storage) -> Bool {
        switch (value, storage) {
        case (.integer, .integer), (.integer, .double), (.integer, .decimal), (.double, .double), (.double, .integer),
             (.decimal, .decimal), (.string, .string), (.string, .date), (.string, .guid), (.boolean, .boolean),
             (.date, .date), (.guid, .guid), (.blob, .blob):
            return true
        default:
            return false
        }
    }

    /// Whether converting a number kept its value exactly (`2.0` → `2`, not `2.5` → `2`).
    private static func sameNumber(_ given: Value, _ converted: Value) -> Bool {
        switch (given, converted) {
        case let (.double(a), .integer(b)): return Double(b) == a && a.rounded() == a
        case let (.integer(a), .double(b)): return Double(a) == b && Int64(exactly: b) == a
        default: return true
        }
    }

    private func isValue(_ node: ExpressionNode) -> Bool {
        switch node {
        case .literal, .parameter: return true
        default: return false
        }
    }

    private mutating func bind(_ value: Value) throws -> String {
        if value.isNull { return "NULL" }
        if case .string(let text) = value, text.utf8.contains(0) { throw NotExact("text holding NUL, which no database stores") }
        let key = Self.exactBytes(of: value)
        if let index = argumentIndex[key] { return dialect.placeholder(index) }
        arguments.append(value)
        argumentIndex[key] = arguments.count
        return dialect.placeholder(arguments.count)
    }

    /// A value's kind and bytes: two values are one argument only when these are equal
    /// (strings by their UTF-8, not by Swift's canonical equivalence).
    private static func exactBytes(of value: Value) -> [UInt8] {
        switch value {
        case .string(let text): return [1] + Array(text.utf8)
        case .double(let double): return [2] + withUnsafeBytes(of: double.bitPattern) { Array($0) }
        case .blob(let data): return [3] + Array(data)
        default: return [4] + Array("\(value.kindName):\(value.text)".utf8)
        }
    }

    private func collated(_ sql: String, _ kind: Kind) -> String {
        kind == .value(.string) && isPostgres && sql != "NULL" ? "(\(sql) COLLATE \"C\")" : sql
    }

    private func isComparable(_ kind: Kind) -> Bool {
        kind == .value(.guid) || isOrderable(kind)
    }

    /// Kinds the database orders as Relata does. SQLite holds decimals and dates as text, whose
    /// order is not theirs (`…00Z` sorts after `…00.5Z`).
    private func isOrderable(_ kind: Kind) -> Bool {
        switch kind {
        case .value(.integer), .value(.double), .value(.boolean), .value(.string): return true
        case .value(.decimal), .value(.date): return isPostgres
        default: return false
        }
    }

    // MARK: Kinds

    private func source(_ qualifier: String) throws -> (alias: String, table: QueryCatalog.Table) {
        for scope in scopes.reversed() {
            if let source = scope.first(where: { $0.name.equalsIgnoringCase(qualifier) }) {
                return (source.alias, source.table)
            }
        }
        throw NotExact("no table called \(qualifier)")
    }

    /// A statement's tables, as the query calls them, not yet given aliases.
    private func sources(of statement: SelectStatement) throws -> [(name: String, alias: String, table: QueryCatalog.Table)] {
        try ([statement.from] + statement.joins.map(\.table)).map { reference in
            guard let table = try? storage.definition(of: reference.name) else { throw NotExact("no table \(reference.name)") }
            return (reference.scopeName, "", QueryCatalog.Table(name: table.name, fields: table.fields))
        }
    }

    /// The kind of value an expression gives, as DA SQL evaluates it.
    private func kind(of node: ExpressionNode) throws -> Kind {
        switch node {
        case .literal(let value): return ValueKind(value)
        case .parameter(let name, _): return ValueKind(parameters[name] ?? .null)
        case .qualifiedField(let qualifier, let name, _):
            guard let field = try source(qualifier).table.field(named: name) else { throw NotExact("no field \(qualifier).\(name)") }
            return .value(field.type.storage)
        case .negate(let operand, _): return try kind(of: operand)
        case .binary(let op, let left, let right, _):
            if op.isComparison || op == .and || op == .or { return .value(.boolean) }
            let kinds = [try kind(of: left), try kind(of: right)]
            if op == .concatenate || kinds.contains(.value(.string)) { return .value(.string) }
            if kinds.contains(.value(.decimal)) { return .value(.decimal) }
            if kinds.contains(.value(.double)) || (op == .divide && kinds.contains(.value(.integer))) { return .value(.double) }
            return kinds.first { $0 != .null } ?? .null
        case .function(let name, let arguments, _):
            switch name.uppercased() {
            case "YEAR", "MONTH", "DAY", "LENGTH", "LEN": return .value(.integer)
            case "UPPER", "LOWER", "TRIM", "SUBSTRING": return .value(.string)
            default: return try arguments.map { try kind(of: $0) }.first { $0 != .null } ?? .null
            }
        case .aggregate(let function, let argument, _, _):
            guard let argument else { return .value(.integer) }
            switch function {
            case .count: return .value(.integer)
            case .average: return try kind(of: argument) == .value(.integer) ? .value(.double) : kind(of: argument)
            default: return try kind(of: argument)
            }
        case .not, .isNull, .inList, .like, .between, .inQuery, .exists: return .value(.boolean)
        case .field: throw NotExact("an unqualified field (the query was not checked)")
        }
    }


    private static func type(for storage: DataType.Storage) -> DataType {
        switch storage {
        case .integer: .largeInt
        case .double: .float
        case .decimal: .decimal
        case .boolean: .boolean
        case .string: .string
        case .date: .dateTime
        case .guid: .guid
        case .blob: .blob
        }
    }
}

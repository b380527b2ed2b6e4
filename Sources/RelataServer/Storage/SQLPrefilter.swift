import Relata

/// The part of a where expression SQL can decide exactly like Relata's evaluator,
/// as a condition with bound parameters: it narrows the rows a database sends, and
/// the whole expression then decides on them with the same evaluator as every
/// other site — so a filter gives the same rows offline, on a client and here.
/// When the condition is the whole expression, the database's rows are the answer.
///
/// Pushed down: `AND` of parts (any part that cannot be is dropped, which only
/// widens), `OR` of parts that both can be, comparisons of an integer, floating,
/// boolean or GUID field with a value (strings: `=` and `<>`), `IN` lists of such
/// values, and `IS [NOT] NULL`. Decimals and dates are stored as text, so their
/// order is left to the evaluator.
struct SQLPrefilter {
    let fields: [FieldDefinition]
    let dialect: any SQLDialect
    /// A field's column, quoted for SQL.
    let column: (String) -> String

    /// The condition and its arguments, or nil when nothing can be pushed down; `isWhole` when
    /// it is the whole expression, so the rows the database sends are exactly the answer.
    func condition(for expression: Relata.Expression, parameters: [String: Value]) -> (sql: String, arguments: [Value], isWhole: Bool)? {
        var arguments: [Value] = []
        var dropped = false
        guard let sql = compile(expression.root, parameters: parameters, arguments: &arguments, dropped: &dropped) else { return nil }
        return (sql, arguments, !dropped)
    }

    /// `dropped` becomes true when a part of an `AND` could not be pushed down.
    private func compile(_ node: ExpressionNode, parameters: [String: Value], arguments: inout [Value], dropped: inout Bool) -> String? {
        switch node {
        // Both sides compile into the one argument list, in order, so placeholders number on
        // (`$1`, `$2`, …); a side that cannot be pushed down takes its arguments back out.
        case .binary(.and, let left, let right, _):
            let leftSQL = compileOrUndo(left, parameters: parameters, arguments: &arguments, dropped: &dropped)
            let rightSQL = compileOrUndo(right, parameters: parameters, arguments: &arguments, dropped: &dropped)
            switch (leftSQL, rightSQL) {
            case let (l?, r?): return "(\(l) AND \(r))"
            case let (l?, nil):
                dropped = true
                return l
            case let (nil, r?):
                dropped = true
                return r
            case (nil, nil): return nil
            }
        case .binary(.or, let left, let right, _):
            let start = arguments.count
            guard let l = compileOrUndo(left, parameters: parameters, arguments: &arguments, dropped: &dropped),
                  let r = compileOrUndo(right, parameters: parameters, arguments: &arguments, dropped: &dropped) else {
                arguments.removeSubrange(start...)
                return nil
            }
            return "(\(l) OR \(r))"
        case .binary(let op, let left, let right, _) where op.isComparison:
            if let (field, value) = fieldAndValue(left, right, parameters: parameters), let sqlOp = sqlOperator(op, for: field) {
                arguments.append(value)
                return "\(column(field.name)) \(sqlOp) \(dialect.placeholder(arguments.count))"
            }
            if let (field, value) = fieldAndValue(right, left, parameters: parameters), let sqlOp = sqlOperator(op.flipped, for: field) {
                arguments.append(value)
                return "\(column(field.name)) \(sqlOp) \(dialect.placeholder(arguments.count))"
            }
            return nil
        case .isNull(.field(let name, _), let negated):
            guard let field = field(named: name) else { return nil }
            return "\(column(field.name)) IS \(negated ? "NOT " : "")NULL"
        case .inList(.field(let name, _), let list, negated: false):
            guard let field = field(named: name), sqlOperator(.equal, for: field) != nil else { return nil }
            var values: [Value] = []
            for item in list {
                guard let value = value(of: item, for: field, parameters: parameters) else { return nil }
                values.append(value)
            }
            guard !values.isEmpty else { return nil }
            let placeholders = values.indices.map { dialect.placeholder(arguments.count + $0 + 1) }
            arguments += values
            return "\(column(field.name)) IN (\(placeholders.joined(separator: ", ")))"
        default:
            return nil
        }
    }

    /// `compile`, leaving `arguments` as they were when the node cannot be pushed down.
    private func compileOrUndo(_ node: ExpressionNode, parameters: [String: Value], arguments: inout [Value], dropped: inout Bool) -> String? {
        let start = arguments.count
        guard let sql = compile(node, parameters: parameters, arguments: &arguments, dropped: &dropped) else {
            arguments.removeSubrange(start...)
            return nil
        }
        return sql
    }

    /// A field on one side and a value that fits it on the other.
    private func fieldAndValue(_ fieldNode: ExpressionNode, _ valueNode: ExpressionNode,
                               parameters: [String: Value]) -> (FieldDefinition, Value)? {
        guard case .field(let name, _) = fieldNode, let field = field(named: name),
              let value = value(of: valueNode, for: field, parameters: parameters) else { return nil }
        return (field, value)
    }

    /// A literal's or parameter's value converted to the field's type (nil when it is NULL or does not convert:
    /// the evaluator decides those).
    private func value(of node: ExpressionNode, for field: FieldDefinition, parameters: [String: Value]) -> Value? {
        let raw: Value
        switch node {
        case .literal(let value): raw = value
        case .parameter(let name, _):
            guard let value = parameters[name] else { return nil }
            raw = value
        default: return nil
        }
        guard !raw.isNull, let coerced = try? field.coerced(raw), !coerced.isNull else { return nil }
        return coerced
    }

    private func sqlOperator(_ op: BinaryOperator, for field: FieldDefinition) -> String? {
        switch field.type.storage {
        case .integer, .double, .boolean:
            return op == .notEqual ? "<>" : op.rawValue
        case .string, .guid:
            switch op {
            case .equal: return "="
            case .notEqual: return "<>"
            default: return nil
            }
        case .decimal, .date, .blob:
            return nil
        }
    }

    private func field(named name: String) -> FieldDefinition? {
        fields.first { $0.name.equalsIgnoringCase(name) }
    }
}

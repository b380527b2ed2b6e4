/// Conditions of `WHERE` that can run before the joins, on one table's rows — so a join
/// reads only the rows that can be kept (`… JOIN Cities ci ON … WHERE ci.Country = 'NO'`
/// joins the Norwegian cities, not all of them) — without changing the answer or an error.
///
/// Only conditions that cannot fail move: comparisons of fields and values of kinds Relata
/// compares without complaint, `IS NULL`, `IN` lists, `AND`/`OR`/`NOT` of those. They must
/// also be the first conditions of `WHERE`'s AND chain, and every join's `ON` must be unable
/// to fail: on the rows removed early, the scan would have evaluated nothing else that could
/// fail either. The whole `WHERE` still decides on the joined rows.
package struct EarlyConditions {
    /// The statement's tables by the name it calls them (lowercased).
    let tables: [String: DataTable]
    let parameters: [String: Value]

    typealias Kind = ValueKind

    /// The conditions that can run early, by the (lowercased) name of the table each reads.
    package static func of(_ statement: SelectStatement, tables: [String: DataTable], parameters: [String: Value]) -> [String: [ExpressionNode]] {
        guard let filter = statement.filter, joinsCannotFail(statement, tables: tables, parameters: parameters) else { return [:] }
        let conditions = EarlyConditions(tables: tables, parameters: parameters)
        // A LEFT JOIN's table is NULL where it found no row; WHERE must see those rows.
        var movable = Set([statement.from.scopeName.lowercased()])
        for join in statement.joins where join.kind == .inner { movable.insert(join.table.scopeName.lowercased()) }
        var early: [String: [ExpressionNode]] = [:]
        for part in filter.andParts {
            let names = part.qualifiers
            guard conditions.isSafeCondition(part), names.count == 1, let name = names.first, movable.contains(name) else { break }
            early[name, default: []].append(part)
        }
        return early
    }

    /// Whether every join's `ON` cannot fail (so rows may be found or removed before the joins).
    static func joinsCannotFail(_ statement: SelectStatement, tables: [String: DataTable], parameters: [String: Value]) -> Bool {
        let conditions = EarlyConditions(tables: tables, parameters: parameters)
        return statement.joins.allSatisfy { conditions.isSafeCondition($0.condition) }
    }

    func isSafeCondition(_ node: ExpressionNode) -> Bool {
        let kind = self.kind(of: node)
        return kind == .null || kind == .value(.boolean)
    }

    func kind(of node: ExpressionNode) -> Kind? {
        switch node {
        case .literal(let value): return ValueKind(value)
        case .parameter(let name, _): return parameters[name].map(ValueKind.init)
        case .qualifiedField(let qualifier, let name, _):
            guard let table = tables[qualifier.lowercased()], let field = table.fieldIndex(named: name) else { return nil }
            return .value(table.fields[field].type.storage)
        case .binary(.and, let left, let right, _), .binary(.or, let left, let right, _):
            return isSafeCondition(left) && isSafeCondition(right) ? .value(.boolean) : nil
        case .not(let operand):
            return isSafeCondition(operand) ? .value(.boolean) : nil
        case .isNull(let operand, _):
            return kind(of: operand) == nil ? nil : .value(.boolean)
        case .binary(let op, let left, let right, _) where op.isComparison:
            guard let l = kind(of: left), let r = kind(of: right), Self.compares(l, r) else { return nil }
            return .value(.boolean)
        case .between(let operand, let low, let high, _):
            guard let o = kind(of: operand), let l = kind(of: low), let h = kind(of: high), Self.compares(o, l), Self.compares(o, h) else { return nil }
            return .value(.boolean)
        case .inList(let operand, let items, _):
            guard let o = kind(of: operand) else { return nil }
            for item in items {
                guard let kind = kind(of: item), Self.compares(o, kind) else { return nil }
            }
            return .value(.boolean)
        case .binary(let op, let left, let right, _):
            guard let l = kind(of: left), let r = kind(of: right) else { return nil }
            switch (op, l, r) {
            case (_, .null, _), (_, _, .null): return .null
            // By zero is NULL, and the one quotient that overflows becomes a float.
            case (.remainder, .value(.integer), .value(.integer)): return .value(.integer)
            case (.divide, .value(.integer), .value(.integer)): return .value(.double)
            case (.add, .value(.double), .value(.double)), (.subtract, .value(.double), .value(.double)),
                 (.multiply, .value(.double), .value(.double)), (.divide, .value(.double), .value(.double)):
                return .value(.double)
            case (.concatenate, .value(.string), .value(.string)): return .value(.string)
            default: return nil   // integer + - * can overflow; decimals are left alone
            }
        default:
            return nil
        }
    }

    /// Whether Relata compares two kinds without failing.
    private static func compares(_ a: Kind, _ b: Kind) -> Bool {
        switch (a, b) {
        case (.null, _), (_, .null): return true
        case (.value(let x), .value(let y)):
            let numbers: Set<DataType.Storage> = [.integer, .double]
            return x == y || (numbers.contains(x) && numbers.contains(y))
        }
    }

}

extension ExpressionNode {
    /// The conditions of an AND chain, left to right (the node itself when it is not an AND).
    var andParts: [ExpressionNode] {
        if case .binary(.and, let left, let right, _) = self { return left.andParts + right.andParts }
        return [self]
    }
}

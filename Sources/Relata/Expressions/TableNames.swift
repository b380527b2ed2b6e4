import Foundation

/// A table's fields as an expression's names: stored fields read from the typed columns,
/// calculated and lookup fields through the table.
///
/// A comparison of a stored field with a constant reads the typed column directly for
/// unchanged rows (the fast path), and goes through the row's values only for rows with
/// changes; calculated fields that compute many rows at once are computed up front.
struct TableNames: ExpressionNames {
    typealias Condition = ExpressionCompiler.Condition

    let table: DataTable
    let text: String

    var tableName: String? { table.name }

    func evaluator(for node: ExpressionNode, compiler: ExpressionCompiler) throws -> ExpressionCompiler.Evaluate {
        switch node {
        case .field(let name, let offset):
            if let field = table.fieldIndex(named: name) {
                let table = self.table
                return { slot in table.postedValue(slot: slot, field: field) }
            }
            guard table.isVirtualField(named: name) else {
                let error = table.unknownField(name)
                throw RelataError(.unknownField, "\(error.message) in \"\(text)\"", table: table.name, field: name,
                                  location: ExpressionParser.location(of: offset, in: text))
            }
            let table = self.table
            if let prefetched = try prefetch(name) {
                return { slot in prefetched[slot] }
            }
            return { slot in try table.virtualValue(named: name, slot: slot) }
        default:
            throw compiler.syntaxError("qualified names, aggregates and subqueries belong in a DA SQL query, not a where expression",
                                       at: ExpressionCompiler.offset(of: node))
        }
    }

    func fastComparison(_ op: BinaryOperator, _ node: ExpressionNode, _ constant: Value, fallback: @escaping Condition) -> Condition? {
        guard case .field(let name, _) = node, let field = table.fieldIndex(named: name) else { return nil }
        return fastComparison(op, field: field, constant: constant, fallback: fallback)
    }

    /// `field op constant` on the typed column, for rows without changes.
    private func fastComparison(_ op: BinaryOperator, field: Int, constant: Value, fallback: @escaping Condition) -> Condition? {
        if constant.isNull { return { _ in .unknown } }
        switch table.columns[field] {
        case .integer(let column):
            guard case .integer(let key) = constant else { return nil }
            return typedComparison(op, column, key, fallback)
        case .double(let column):
            guard let key = constant.doubleValue else { return nil }
            return typedComparison(op, column, key, fallback)
        case .string(let column):
            // By code point, as everywhere (Swift's own `==` and `<` go by canonical equivalence).
            guard let key = constant.stringValue else { return nil }
            return switch op {
            case .equal: typedTest(column, fallback) { Value.sameCodePoints($0, key) }
            case .notEqual: typedTest(column, fallback) { !Value.sameCodePoints($0, key) }
            default: typedTest(column, fallback) { op.holds(for: Value.codePointOrder($0, key)) }
            }
        case .date(let column):
            guard let key = constant.dateValue ?? constant.stringValue.flatMap(ISO8601.date(from:)) else { return nil }
            return typedComparison(op, column, key, fallback)
        case .boolean(let column):
            guard let key = constant.booleanValue, op == .equal || op == .notEqual else { return nil }
            let wanted = op == .equal ? key : !key
            return typedTest(column, fallback) { $0 == wanted }
        default:
            return nil
        }
    }

    private func typedComparison<E: Comparable>(_ op: BinaryOperator, _ column: TypedColumn<E>, _ key: E,
                                                _ fallback: @escaping Condition) -> Condition {
        func make(_ test: @escaping (E) -> Bool) -> Condition { typedTest(column, fallback, test) }
        switch op {
        case .equal: return make { $0 == key }
        case .notEqual: return make { $0 != key }
        case .less: return make { $0 < key }
        case .lessOrEqual: return make { $0 <= key }
        case .greater: return make { $0 > key }
        default: return make { $0 >= key }
        }
    }

    /// A test of a typed column's elements, for rows without changes (the others go to
    /// `fallback`); NULL is unknown.
    private func typedTest<E>(_ column: TypedColumn<E>, _ fallback: @escaping Condition, _ test: @escaping (E) -> Bool) -> Condition {
        let elements = column.elements, nulls = column.nullWords, dirty = table.dirty
        return { slot in
            if dirty[slot] != 0 { return try fallback(slot) }
            if nulls[slot &>> 6] & (1 &<< UInt64(slot & 63)) != 0 { return .unknown }
            return test(elements[slot]) ? .yes : .no
        }
    }

    /// A calculated field that can compute many rows at once is computed for every
    /// visible row before the filter runs, instead of once per row as it goes.
    private func prefetch(_ name: String) throws -> [Value]? {
        guard table.calculatedFields.contains(where: { $0.computeMany != nil && $0.name.equalsIgnoringCase(name) }) else {
            return nil
        }
        let slots = table.visibleSlots
        var bySlot = [Value](repeating: .null, count: table.slotCount)
        for (slot, value) in zip(slots, try table.values(ofField: name, slots: slots)) { bySlot[slot] = value }
        return bySlot
    }

}

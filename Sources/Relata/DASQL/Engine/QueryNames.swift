/// A query's names for the expression compiler: its tables' fields row by row, or — once
/// rows are grouped — group by group, with the aggregates' values; subqueries run through
/// the engine, once when they stand alone, per row when they read the enclosing query.
struct QueryNames: ExpressionNames {
    /// The values of a grouped query: each group's first row, and each aggregate's value per group.
    struct Groups {
        var firstRows: [Int]
        var aggregates: [ExpressionNode: [Value]]
    }

    let rows: QueryRows
    let engine: QueryEngine
    /// The row of the enclosing query, for a correlated subquery.
    let outer: OuterRow?
    var groups: Groups?

    var tableName: String? { nil }

    func evaluator(for node: ExpressionNode, compiler: ExpressionCompiler) throws -> ExpressionCompiler.Evaluate {
        switch node {
        case .qualifiedField(let qualifier, let name, let offset):
            guard let source = rows.source(named: qualifier) else {
                guard let outer else { throw compiler.syntaxError("no table called '\(qualifier)' here", at: offset) }
                let value = try outer.value(of: node)
                return { _ in value }
            }
            guard let field = rows.tables[source].fieldIndex(named: name) else {
                throw compiler.syntaxError("\(qualifier) has no field '\(name)'", at: offset)
            }
            let slots = rows.slots[source], read = rows.tables[source].postedValueReader(field: field)
            if let firstRows = groups?.firstRows {
                return { group in
                    let row = firstRows[group]
                    guard row >= 0 else { return .null }
                    let slot = slots[row]
                    return slot < 0 ? .null : read(slot)
                }
            }
            return { row in
                let slot = slots[row]
                return slot < 0 ? .null : read(slot)
            }
        case .aggregate(_, _, _, let offset):
            guard let values = groups?.aggregates[node.withoutPositions] else {
                throw compiler.syntaxError("an aggregate stands outside a grouped query", at: offset)
            }
            return { group in values[group] }
        case .inQuery(let operand, let query, let negated, _):
            let subject = try compiler.value(operand)
            let members = try subqueryAnswer(query) { rows in
                (keys: Set(rows.compactMap { $0[0].isNull ? nil : QueryKey.of($0[0]) }), hasNull: rows.contains { $0[0].isNull })
            }
            return { row in
                let value = try subject(row)
                if value.isNull { return .null }
                let (keys, hasNull) = try members(row)
                if keys.contains(QueryKey.of(value)) { return .boolean(!negated) }
                return hasNull ? .null : .boolean(negated)
            }
        case .exists(let query, _):
            let found = try subqueryAnswer(query) { !$0.isEmpty }
            return { row in .boolean(try found(row)) }
        default:
            throw compiler.syntaxError("'\(node)' cannot be read here", at: ExpressionCompiler.offset(of: node))
        }
    }

    /// A field of one of this query's tables compared with a constant, row by row: the table's
    /// own fast path on its typed column, reached through the row's slot.
    func fastComparison(_ op: BinaryOperator, _ node: ExpressionNode, _ constant: Value,
                        fallback: @escaping ExpressionCompiler.Condition) -> ExpressionCompiler.Condition? {
        guard groups == nil, case .qualifiedField(let qualifier, let name, let offset) = node,
              let source = rows.source(named: qualifier) else { return nil }
        let table = rows.tables[source]
        guard let field = table.fieldIndex(named: name) else { return nil }
        // The table's fast path falls back, for a changed row, to the general comparison of that slot.
        let bySlot: ExpressionCompiler.Condition = { slot in
            do throws(Value.CompareFailure) {
                guard let order = try Value.compare(table.postedValue(slot: slot, field: field), constant) else { return .unknown }
                return Truth(op.holds(for: order))
            } catch {
                throw EvaluationFailure(message: error.message, offset: offset)
            }
        }
        guard let fast = TableNames(table: table, text: engine.text).fastComparison(op, .field(name, offset: offset), constant, fallback: bySlot) else {
            return nil
        }
        let slots = rows.slots[source]
        return { row in
            let slot = slots[row]
            return slot < 0 ? .unknown : try fast(slot)
        }
    }

    /// A subquery's answer, summarised: computed once when the subquery reads only its own
    /// tables, and for each row (or group) of this query when it reads this query's too.
    private func subqueryAnswer<Summary>(_ query: SelectStatement,
                                         _ summarise: @escaping ([[Value]]) -> Summary) throws -> (Int) throws -> Summary {
        if query.readsOuterNames(defined: []) {
            let engine = self.engine
            return { row in summarise(try engine.answer(query, outer: OuterRow(names: self, row: row))) }
        }
        let summary = summarise(try engine.answer(query, outer: outer))
        return { _ in summary }
    }
}

/// The row of an enclosing query a correlated subquery reads.
final class OuterRow {
    let names: QueryNames
    let row: Int

    init(names: QueryNames, row: Int) {
        self.names = names
        self.row = row
    }

    func value(of node: ExpressionNode) throws -> Value {
        let compiler = ExpressionCompiler(names: names, parameters: names.engine.parameters, text: names.engine.text)
        return try names.evaluator(for: node, compiler: compiler)(row)
    }
}

extension SelectStatement {
    /// Whether the statement reads a table of an enclosing query (a correlated subquery).
    func readsOuterNames(defined outerDefined: Set<String>) -> Bool {
        let defined = outerDefined.union(([from] + joins.map(\.table)).map { $0.scopeName.lowercased() })
        var pending = expressions
        while let node = pending.popLast() {
            switch node {
            case .qualifiedField(let qualifier, _, _):
                if !defined.contains(qualifier.lowercased()) { return true }
            case .inQuery(let operand, let query, _, _):
                if query.readsOuterNames(defined: defined) { return true }
                pending.append(operand)
            case .exists(let query, _):
                if query.readsOuterNames(defined: defined) { return true }
            default:
                pending += node.children
            }
        }
        return false
    }
}

import Relata

/// Rules on tables: the row-event hook, calculated fields, and batch validation —
/// what any adapter (local, or a client of a data server) uses on its tables.
extension RuleRuntime {
    /// Makes each table whose scripts handle a row event run them (`onNewRow`,
    /// `beforePost`, `beforeInsert`, `beforeUpdate`, `beforeDelete`) as its rows change;
    /// a table whose scripts handle none is left without a hook. Call it again after
    /// loading scripts. Tables do not keep the runtime alive.
    ///
    /// ```swift
    /// try runtime.load(ordersScript, forTable: "Orders")
    /// runtime.attachRules(to: [orders])
    /// try orders.rows[0].setValue(0, forKey: "Quantity")   // beforePost runs
    /// ```
    public func attachRules(to tables: [DataTable]) {
        for table in tables {
            let needed = RuleEvent.rowEvents.contains { handles($0, table: table.name) }
            if needed, !((table.rules as? TableRules)?.host === self) {
                table.rules = TableRules(host: self, tableName: table.name)
            } else if !needed, (table.rules as? TableRules)?.host === self {
                table.rules = nil
            }
        }
    }

    /// Takes this runtime's row-event hook off tables (those another runtime hooks keep theirs).
    public func detachRules(from tables: [DataTable]) {
        for table in tables where (table.rules as? TableRules)?.host === self { table.rules = nil }
    }

    /// Adds a calculated field to a table whose value a JavaScript function of the row computes:
    /// the name of a function in the table's script, or a function expression.
    ///
    /// ```swift
    /// try runtime.addCalculatedField(name: "Total", type: .currency, to: details,
    ///                                function: "function (row) { return row.Quantity * row.UnitPrice }")
    /// ```
    /// The table keeps the runtime alive, so its calculated fields work as long as it lives.
    /// A standing environment (``setEnvironment(_:)``) whose data holds the table would
    /// then keep both alive: an owner clears it when it goes, as a ``LocalDataAdapter`` does.
    ///
    /// - Throws: ``ScriptError`` when the function is missing or does not compile; ``RelataError``
    ///   when the table cannot have the field (its name is taken).
    public func addCalculatedField(name: String, type: DataType, cached: Bool = false, to table: DataTable,
                                   function: String) throws {
        let compiled = try calculationFunction(function, table: table.name, field: name)
        try table.addCalculatedField(name: name, type: type, cached: cached, compute: { row in
            try self.calculate(compiled, row: row, field: name)
        }, computeMany: { [unowned table] rows in
            try self.mapBatch(compiled, table: table, rows: rows, type: type, field: name)
        })
    }

    /// Runs the row rules over every pending change of a table at once, as a
    /// client does just before an apply and a server does when a delta arrives:
    /// `beforePost` then `beforeInsert` for added rows, `beforePost` then
    /// `beforeUpdate(row, old)` for modified rows, `beforeDelete` for deleted rows
    /// (see ``LocalDataAdapter/validateChanges(for:)``).
    ///
    /// - Returns: the violations, in the order the rows were first changed.
    public func validateChanges(for table: DataTable) throws -> [RuleViolation] {
        let sets = table.rowSets(in: [.added, .modified, .deleted])
        return try validateChanges(of: table, added: sets[0], modified: sets[1], deleted: sets[2])
    }

    /// The row rules over given changed rows of a table, in batches. Events run in the
    /// order a row's own edit runs them — each event in every script of the table (its
    /// own, then the schema's) before the next event — and a row fails at most once:
    /// failed rows leave the pass before the next event or script runs.
    ///
    /// - Returns: the violations, in the order the rows were first changed.
    func validateChanges(of table: DataTable, added: RowSet, modified: RowSet, deleted: RowSet) throws -> [RuleViolation] {
        try RuleScope.run { try validatingChanges(of: table, added: added, modified: modified, deleted: deleted) }
    }

    private func validatingChanges(of table: DataTable, added: RowSet, modified: RowSet, deleted: RowSet) throws -> [RuleViolation] {
        var violations: [RuleViolation] = []
        let passes: [(rows: RowSet, events: [RuleEvent], originals: Bool)] = [
            (added, RuleEvent.posting(inserting: true), false),
            (modified, RuleEvent.posting(inserting: false), true),
            (deleted, [.beforeDelete], false),
        ]
        let scripts = scripts(forTable: table.name)
        for pass in passes where !pass.rows.isEmpty {
            var rows = pass.rows
            // Failed rows leave the pass when a later batch is about to run, not after the last one.
            var rejected: Set<Int> = []
            for event in pass.events {
                for script in scripts where script.handler(event.handlerName) != nil {
                    if !rejected.isEmpty {
                        rows = rows.removing(positions: rejected)
                        rejected = []
                    }
                    guard !rows.isEmpty else { break }
                    let outcome = try runBatch([event], in: script, table: table, rows: rows, withOriginals: pass.originals)
                    rejected = Set(outcome.failures.keys)
                    apply(outcome.writes, of: event, to: rows, in: table, violations: &violations, rejected: &rejected)
                    violations.append(contentsOf: outcome.failures.values)
                }
            }
        }
        // The positions are sorted, not the violations: each carries a row and an error of many strings.
        let changeIds = violations.map(\.row.changeId)
        return violations.indices.sorted { changeIds[$0] < changeIds[$1] }.map { violations[$0] }
    }

    /// Writes the values rules set in a batch, each row wholly or not at all: every value
    /// is checked before any is written; a row whose values do not pass is a violation.
    private func apply(_ writes: [Int: [String: Value]], of event: RuleEvent, to rows: RowSet, in table: DataTable,
                       violations: inout [RuleViolation], rejected: inout Set<Int>) {
        table.withoutRules {
            for (index, values) in writes {
                let row = rows[index]
                let ordered = values.sorted { $0.key < $1.key }
                do {
                    for (name, value) in ordered {
                        guard let field = table.field(named: name) else { continue }
                        if field.readOnly || field.autoIncrement {
                            throw RelataError(.readOnlyField, "the field is read-only", table: table.name, field: name, row: row.label)
                        }
                        _ = try field.validate(value)
                    }
                    for (name, value) in ordered { try row.setValue(value, forKey: name) }
                } catch {
                    violations.append(RuleViolation(row: row, error: ScriptError(
                        .runtime, "\(error)", event: event.handlerName, table: table.name, row: row.label)))
                    rejected.insert(index)
                }
            }
        }
    }
}

import Relata

/// A row whose pending change a rule rejects.
public struct RuleViolation {
    /// The row.
    public let row: DataTableRow
    /// What the rule said, with the script location, event, table and row.
    public let error: ScriptError
}

extension LocalDataAdapter {
    /// Runs the row rules over every pending change of a table at once, as a
    /// client does just before an apply and a server does when a delta arrives:
    /// `beforePost` then `beforeInsert` for added rows, `beforePost` then
    /// `beforeUpdate(row, old)` for modified rows, `beforeDelete` for deleted rows.
    ///
    /// Each row gets its own verdict; the rows are handed to JavaScript in
    /// batches (numeric fields as shared typed arrays), so a rule set over a
    /// million changed rows runs in milliseconds rather than seconds. In a batch,
    /// `row` is a cursor with the same field access as a row object.
    ///
    /// Values the rules set are applied to the rows that pass (validated like
    /// any write); a value that does not validate makes its row a violation.
    ///
    /// ```swift
    /// for violation in try adapter.validateChanges(for: orderDetails) {
    ///     print(violation.row.label, violation.error.message)
    /// }
    /// ```
    /// - Returns: the violations, in the order the rows were first changed.
    public func validateChanges(for table: DataTable) throws -> [RuleViolation] {
        guard tables.contains(where: { $0 === table }) else { throw unknownTable(table.name) }
        data.keepsAddedRows = true
        defer { data.keepsAddedRows = false }
        // A row fails at most once: failed rows leave the pass before the next script runs.
        var violations: [RuleViolation] = []
        let sets = table.rowSets(in: [.added, .modified, .deleted])
        let passes: [(rows: RowSet, events: [RuleEvent], originals: Bool)] = [
            (sets[0], RuleEvent.posting(inserting: true), false),
            (sets[1], RuleEvent.posting(inserting: false), true),
            (sets[2], [.beforeDelete], false),
        ]
        for pass in passes where !pass.rows.isEmpty {
            var rows = pass.rows
            let scripts = host.scripts(forTable: table.name)
            for script in scripts {
                let outcome = try host.runBatch(pass.events, in: script, table: table, rows: rows, withOriginals: pass.originals)
                var rejected = Set(outcome.failures.keys)
                table.withoutRules {
                    for (index, values) in outcome.writes {
                        let row = rows[index]
                        let ordered = values.sorted { $0.key < $1.key }
                        // Every value is checked before any is written, so a row is changed wholly or not at all.
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
                                .runtime, "\(error)", event: pass.events.map(\.handlerName).joined(separator: "/"), table: table.name, row: row.label)))
                            rejected.insert(index)
                        }
                    }
                }
                for (index, error) in outcome.failures {
                    violations.append(RuleViolation(row: rows[index], error: error))
                }
                if !rejected.isEmpty && script !== scripts.last {
                    rows = rows.filter(positions: { !rejected.contains($0) })
                }
            }
        }
        return violations.map { ($0.row.changeId, $0) }.sorted { $0.0 < $1.0 }.map(\.1)
    }
}

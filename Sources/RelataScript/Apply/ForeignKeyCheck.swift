import Relata

/// Declared foreign keys checked over a unit of work the way a database checks them at
/// commit — the one check every store runs before it stores (``TableStore`` over in-memory
/// tables, a data server over the rows it loaded), so every site refuses the same changes
/// with the same words.
public enum ForeignKeyCheck {
    /// Fails the changes that would break a declared foreign key if the others were committed,
    /// until none would: a failed parent insert fails the child rows that need it.
    ///
    /// `tables[i]` holds `deltas[i]`'s changes, with the parent and child rows the check
    /// needs (see ``DataTable/foreignKeyViolations(in:committing:)``).
    ///
    /// ```swift
    /// ForeignKeyCheck.failViolations(in: &deltas, tables: deltas.map { data.table(named: $0.tableName)! })
    /// ```
    public static func failViolations(in deltas: inout [Delta], tables: [DataTable]) {
        // Most applies touch no table a foreign key involves: nothing to gather then.
        guard tables.contains(where: \.hasForeignKeys) else { return }
        while true {
            var committing: [ObjectIdentifier: Set<Int>] = [:]
            for (delta, table) in zip(deltas, tables) {
                var ids = committing[ObjectIdentifier(table)] ?? []
                ids.reserveCapacity(ids.count + delta.changes.count)
                // By index: a change is not copied (with its values) to read two numbers.
                for index in delta.changes.indices where delta.changes[index].status != .failed { ids.insert(delta.changes[index].changeId) }
                committing[ObjectIdentifier(table)] = ids
            }
            var failedAny = false
            for index in deltas.indices {
                let violations = tables[index].foreignKeyViolations(in: deltas[index], committing: committing)
                for change in deltas[index].changes.indices {
                    guard let message = violations[deltas[index].changes[change].changeId] else { continue }
                    deltas[index].changes[change].fail(message, kind: .constraint)
                    failedAny = true
                }
            }
            if !failedAny { return }
        }
    }
}

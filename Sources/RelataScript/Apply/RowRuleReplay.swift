import Relata

/// Runs the row rules of a delta that arrived from elsewhere — a data server
/// receiving a client's changes — by replaying its changes onto the stored rows.
///
/// A client is never trusted: it may have run no rules, old rules, or sent
/// values by hand. So each change is made again on a ``DataTable`` holding the
/// rows as they are stored, and the table's delta, which keeps the incoming
/// change ids and temporary keys, is what the ``DeltaProcessor`` then
/// processes. One implementation of rule semantics, on every site:
///
/// - a new row is added as an edit, through the same hooks as anywhere else
///   (`onNewRow`, then `beforePost` and `beforeInsert` as it posts);
/// - updates and deletes are made on the stored rows first, then their rules
///   run over all of them at once — `beforePost` and `beforeUpdate(row, old)`,
///   `beforeDelete` — by the batch validation a client runs before an apply
///   (``LocalDataAdapter/validateChanges(for:)``): one call into JavaScript per
///   65,536 rows instead of one per row and event, each row with its own
///   verdict. A refused row gets its stored values back.
///
/// Before an update or a delete is replayed, the row's stored values are
/// compared with the change's original values for the fields a store writes
/// (``Delta/loggedFields``): a difference is a ``FailureKind/conflict`` naming
/// the fields that changed underneath, and a row that is gone is one too.
///
/// ```swift
/// let stored = try database.rows(touchedBy: incoming)            // a DataTable of the stored rows
/// let replayed = try runtime.withEnvironment(environment) { RowRuleReplay(runtime: runtime).replay(incoming, onto: stored) }
/// let processed = try runtime.withEnvironment(environment) { try processor.process([replayed], store: store) }
/// ```
public struct RowRuleReplay {
    /// The rules.
    public let runtime: RuleRuntime

    /// Creates a replay with a runtime's rules.
    public init(runtime: RuleRuntime) {
        self.runtime = runtime
    }

    /// Replays `delta` onto `table`, which holds (unchanged) the stored rows its updates
    /// and deletes touch; the runtime's row rules are attached to it.
    ///
    /// - Returns: the delta to process: one change per incoming change, in the incoming
    ///   order and with the incoming ids — those the rows' rules or their stored values
    ///   refused already failed, with their ``ChangeFailure``. Changes the rules made to
    ///   other rows of `table` follow.
    public func replay(_ delta: Delta, onto table: DataTable) -> Delta {
        var failed: [Int: ChangeFailure] = [:]
        let ids = delta.changes.map(\.changeId)
        var seen: Set<Int> = []
        if let duplicate = ids.first(where: { !seen.insert($0).inserted }) {
            return failingEveryChange(of: delta, ChangeFailure(.invalidValue, "the delta has change \(duplicate) twice"))
        }
        if let bad = ids.first(where: { $0 <= 0 }) {
            return failingEveryChange(of: delta, ChangeFailure(.invalidValue, "change ids are positive; the delta has \(bad)"))
        }
        runtime.attachRules(to: [table])
        table.reserveChangeIds(through: ids.max() ?? 0)
        var unchanged: Set<Int> = []
        var updated: [DataTableRow] = []
        var deleted: [DataTableRow] = []
        let checked = CheckedFields(of: delta, in: table)
        // One notice to the table's observers for the whole replay, not one per change.
        table.performBatchUpdates {
            for change in delta.changes {
                do {
                    let row = try replay(change, checking: checked, onto: table)
                    if let row, row.changeId != 0 {
                        try table.adoptChangeId(change.changeId, for: row)
                        if change.type == .update { updated.append(row) } else if change.type == .delete { deleted.append(row) }
                    } else {
                        unchanged.insert(change.changeId)
                    }
                } catch {
                    failed[change.changeId] = failure(describing: error)
                }
            }
            do {
                let violations = try runtime.validateChanges(of: table, added: table.rowSet([]), modified: table.rowSet(updated),
                                                             deleted: table.rowSet(deleted))
                for violation in violations {
                    failed[violation.row.changeId] = failure(describing: violation.error)
                    try table.cancelChange(for: violation.row)
                }
            } catch {
                // The batch itself could not run (a script scope is gone): no update or delete passes unchecked.
                let reason = failure(describing: error)
                for row in updated + deleted where failed[row.changeId] == nil {
                    failed[row.changeId] = reason
                    try? table.cancelChange(for: row)
                }
            }
        }
        var result: Delta
        do {
            result = try table.makeDelta()
        } catch {
            // A rule left a row it made without a required value: nothing can be processed.
            return failingEveryChange(of: delta, failure(describing: error))
        }
        result.keyFields = table.primaryKeyFields.map(\.name)
        let replayed = Dictionary(result.changes.indices.map { (result.changes[$0].changeId, $0) }, uniquingKeysWith: { first, _ in first })
        var changes: [DeltaChange] = []
        changes.reserveCapacity(result.changes.count)
        for incoming in delta.changes {
            if let failure = failed[incoming.changeId] {
                var change = incoming
                change.status = .pending
                change.fail(failure)
                changes.append(change)
            } else if unchanged.contains(incoming.changeId) {
                var change = incoming
                change.resolve()
                changes.append(change)
            } else if let index = replayed[incoming.changeId] {
                changes.append(result.changes[index])
            }
        }
        let incomingIds = Set(ids)
        changes += result.changes.filter { !incomingIds.contains($0.changeId) }
        result.changes = changes
        return result
    }

    /// Makes one change on the table; the row it changed (nil for an update that changes nothing).
    private func replay(_ change: DeltaChange, checking checked: CheckedFields, onto table: DataTable) throws -> DataTableRow? {
        switch change.type {
        case .insert:
            var values: [String: Value] = [:]
            var temporaryKeys: [(field: String, key: Int64)] = []
            for (name, value) in change.newValues {
                let field = try field(name, of: table)
                if field.autoIncrement {
                    if let key = value.integerValue, key < 0 { temporaryKeys.append((field.name, key)) }
                    continue
                }
                if field.readOnly {
                    guard value.isNull else {
                        throw RelataError(.readOnlyField, "the field is read-only; a new row cannot set it", table: table.name, field: field.name)
                    }
                    continue
                }
                values[field.name] = value
            }
            let row = try table.addNewRow(values: values)
            for (field, key) in temporaryKeys { try table.adoptTemporaryKey(key, field: field, for: row) }
            try requireValues(of: row)
            return row
        case .update, .delete:
            // Their rules run afterwards, over all of them at once (see `replay(_:onto:)`).
            let row = try storedRow(for: change, checking: checked, in: table)
            if change.type == .delete {
                try table.withoutRules { try table.removeRow(row) }
                return row
            }
            var values: [String: Value] = [:]
            for (name, value) in change.newValues {
                let field = try field(name, of: table)
                let coerced = try coerce(value, to: field, table: table)
                if coerced != row[field.name] { values[field.name] = coerced }
            }
            if values.isEmpty { return nil }
            try table.withoutRules { try row.setValues(values) }
            return row
        }
    }

    /// The fields a delta's updates and deletes are checked by, found once per delta: the
    /// table's key, and the logged fields the table has (by the name the delta uses).
    private struct CheckedFields {
        let keys: [FieldDefinition]
        let logged: [(name: String, field: FieldDefinition)]

        init(of delta: Delta, in table: DataTable) {
            keys = table.primaryKeyFields
            logged = delta.loggedFields.compactMap { name in table.field(named: name).map { (name, $0) } }
        }
    }

    /// The stored row an update or delete is about, checked against the values the change started from.
    private func storedRow(for change: DeltaChange, checking checked: CheckedFields, in table: DataTable) throws -> DataTableRow {
        let keyFields = checked.keys
        guard !keyFields.isEmpty else {
            throw RelataError(.invalidDelta, "the table has no primary key, so its rows cannot be found", table: table.name)
        }
        let key = try keyFields.map { field in
            guard let value = change.oldValues[field.name] else {
                throw RelataError(.invalidDelta, "change \(change.changeId) lacks the key field's original value", table: table.name, field: field.name)
            }
            return try coerce(value, to: field, table: table)
        }
        guard let row = try table.row(forPrimaryKey: key) else {
            throw ConflictFailure(message: "the row (\(zip(keyFields, key).map { "\($0.name)=\($1.text)" }.joined(separator: ", "))) is no longer there")
        }
        var changed: [String] = []
        for (name, field) in checked.logged {
            guard let original = change.oldValues[name] else { continue }
            if try coerce(original, to: field, table: table) != row.originalValue(forKey: field.name) { changed.append(field.name) }
        }
        if !changed.isEmpty {
            throw ConflictFailure(message: "\(row.label) changed since it was read: \(changed.joined(separator: ", "))")
        }
        return row
    }

    /// A new row must have every required value once its rules ran (auto-increment fields get theirs from the store).
    private func requireValues(of row: DataTableRow) throws {
        for field in row.table.fields where field.required && !field.autoIncrement && row[field.name].isNull {
            try row.table.cancelChange(for: row)
            throw RelataError(.requiredValueMissing, "the field is required", table: row.table.name, field: field.name)
        }
    }

    private func field(_ name: String, of table: DataTable) throws -> FieldDefinition {
        guard let field = table.field(named: name) else {
            throw RelataError(.unknownField, "the table has no field '\(name)'", table: table.name, field: name)
        }
        return field
    }

    private func coerce(_ value: Value, to field: FieldDefinition, table: DataTable) throws -> Value {
        do {
            return try field.coerced(value)
        } catch var error as RelataError {
            error.table = table.name
            throw error
        }
    }

    private func failure(describing error: any Error) -> ChangeFailure {
        if let conflict = error as? ConflictFailure { return ChangeFailure(.conflict, conflict.message) }
        return ChangeFailure(describing: error)
    }

    private func failingEveryChange(of delta: Delta, _ failure: ChangeFailure) -> Delta {
        var result = delta
        for index in result.changes.indices { result.changes[index].fail(failure) }
        return result
    }

    /// A change refused because its row is not as it was read.
    private struct ConflictFailure: Error {
        let message: String
    }
}

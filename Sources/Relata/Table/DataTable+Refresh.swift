/// A pending change whose row changed at the source since it was fetched.
public struct RefreshConflict {
    /// The row with the pending change; it keeps the user's values and its old originals.
    public let row: DataTableRow
    /// The stored fields whose value at the source is not the row's original any more
    /// (empty when the row is gone from the source).
    public let fields: [String]
    /// What happened, in words (also the row's ``DataTableRow/failureMessage``).
    public let message: String
}

extension DataTable {
    /// Replaces the rows as fetched with fresh ones from the data source, keeping every
    /// pending change.
    ///
    /// - Unchanged rows are replaced by `fresh`'s rows.
    /// - An added row stays as it is.
    /// - A modified or deleted row stays pending. When the source still holds its row with
    ///   the same values as the row's originals, nothing else changes (the change is based
    ///   on the fresh row). When the source's row differs, or is gone, the change is a
    ///   conflict: the row keeps the user's values *and* its old originals — so applying it
    ///   is refused as a conflict rather than overwriting what someone else wrote — and
    ///   its ``DataTableRow/failureMessage`` says what changed. Cancel the change to take
    ///   the source's row.
    ///
    /// ```swift
    /// let conflicts = try orders.refreshRows(from: freshOrders)
    /// for conflict in conflicts { print(conflict.row.label, conflict.message) }
    /// ```
    /// - Returns: the conflicts, in row order.
    /// - Throws: ``RelataError/Code/invalidArgument`` when `fresh` has other fields, or the
    ///   table has pending changes and no primary key to match them by. Nothing changes then.
    @discardableResult
    public func refreshRows(from fresh: DataTable) throws -> [RefreshConflict] {
        guard fresh.fields == fields else {
            throw RelataError(.invalidArgument, "the fresh rows have other fields than the table", table: name)
        }
        let pendingSlots = (0..<slotCount).filter { changes.state($0) != .unchanged }
        if !pendingSlots.isEmpty && keyFieldIndexes.isEmpty {
            throw RelataError(.invalidArgument, "the table has pending changes and no primary key to match them with fresh rows; apply or cancel them first",
                              table: name)
        }
        var freshSlotByKey: [[Value]: Int] = [:]
        if !pendingSlots.isEmpty {
            for slot in 0..<fresh.slotCount { freshSlotByKey[keyFieldIndexes.map { fresh.columns[$0].value(at: slot) }] = slot }
        }
        var keptKeys: Set<[Value]> = []
        var conflicts: [(row: DataTableRow, fields: [String], message: String)] = []
        for slot in pendingSlots {
            let key = keyFieldIndexes.map { columns[$0].value(at: slot) }
            keptKeys.insert(key)
            let state = changes.state(slot)
            guard state == .modified || state == .deleted else {
                if freshSlotByKey[key] != nil {
                    conflicts.append((rows(atSlots: [slot])[0], [], "conflict: the source has a row with this key already"))
                }
                continue
            }
            guard let freshSlot = freshSlotByKey[key] else {
                conflicts.append((rows(atSlots: [slot])[0], [], "conflict: the row is no longer at the source (someone deleted it)"))
                continue
            }
            let changed = fields.indices.filter { columns[$0].value(at: slot) != fresh.columns[$0].value(at: freshSlot) }
            if !changed.isEmpty {
                let names = changed.map { fields[$0].name }
                conflicts.append((rows(atSlots: [slot])[0], names,
                                  "conflict: someone changed \(names.joined(separator: ", ")) at the source since the row was fetched"))
            }
        }
        let keyFields = keyFieldIndexes
        let freshRows = (0..<fresh.slotCount).lazy
            .filter { slot in keptKeys.isEmpty || !keptKeys.contains(keyFields.map { fresh.columns[$0].value(at: slot) }) }
            .map { slot in fresh.fields.indices.map { fresh.columns[$0].value(at: slot) } }
        try holdingNotifications {
            removeSlots((0..<slotCount).filter { changes.state($0) == .unchanged })
            keysOfLoadedRows = nil
            try loadRows(freshRows)
            for conflict in conflicts {
                guard conflict.row.slot >= 0, var record = changes[conflict.row.slot] else { continue }
                let slot = conflict.row.slot
                record.failureMessage = conflict.message
                setChanges(record, at: slot)
            }
            notifyChanged()
        }
        return conflicts.map { RefreshConflict(row: $0.row, fields: $0.fields, message: $0.message) }
    }
}

/// Keeping each changed row's edits (``DataTable/recordsEdits``): what the user wrote, not what
/// rules wrote (``RuleScope``), one entry per posted edit, direct write or removal.
extension DataTable {
    /// Whether a write made now is one of the user's edits, to keep.
    var isUserEdit: Bool { recordsEdits && !RuleScope.isActive }

    /// Adds a value the user wrote to the row's open edit (made if needed).
    func noteUserValue(_ value: Value, field: Int, in record: inout RowChanges) {
        let name = fields[field].name
        if let last = record.history.indices.last, record.history[last].sequence == 0 {
            record.history[last].values[name] = value
        } else {
            let kind: RowEdit.Kind = record.state == .addedInEditMode ? .insert : .update
            record.history.append(RowEdit(sequence: 0, kind: kind, values: [name: value]))
        }
    }

    /// Records a value the user wrote directly (outside edit mode) as an edit of its own.
    func recordUserWrite(_ value: Value, field: Int, slot: Int) {
        var record = changes[slot] ?? RowChanges()
        noteUserValue(value, field: field, in: &record)
        setChanges(record, at: slot)
        sealUserEdit(slot: slot, kind: .update)
    }

    /// Closes the row's open edit (or records an edit that set nothing) once it is part of
    /// the row's change; a row left unchanged keeps no edits.
    func sealUserEdit(slot: Int, kind: RowEdit.Kind) {
        guard changes.isDirty(slot) else { return }
        modifyChanges(at: slot) { record in
            if record.changeId == 0 {
                record.history = []
            } else if let last = record.history.indices.last, record.history[last].sequence == 0 {
                record.history[last].sequence = EditSequence.next()
                record.history[last].kind = kind
            } else {
                record.history.append(RowEdit(sequence: EditSequence.next(), kind: kind))
            }
        }
    }

    /// Forgets the open edit (a discarded or failed one).
    func dropOpenEdit(in record: inout RowChanges) {
        if record.history.last?.sequence == 0 { record.history.removeLast() }
    }

    /// What removing a new row leaves for a data server: an insert change whose edits end
    /// with the removal — the user's insert (or the rules', when the edits begin otherwise),
    /// the user's later edits, then the delete — so the server makes them all, and what its
    /// rules did meanwhile, again. Nil for a row not added here.
    func vanishedChange(slot: Int) -> DeltaChange? {
        guard let record = changes[slot], record.state == .added, record.changeId != 0 else { return nil }
        let values = FieldValues(names: FieldNames(unique: fields.map(\.name))) { postedValue(slot: slot, field: $0) }
        return DeltaChange(changeId: record.changeId, type: .insert, newValues: values,
                           edits: postedEdits(slot: slot) + [RowEdit(sequence: EditSequence.next(), kind: .delete)])
    }

    /// The user's posted edits of a slot, in order.
    func postedEdits(slot: Int) -> [RowEdit] {
        let history = changes.history(slot)
        // Shared as it is when no edit is open (each sequence read in place), the usual case.
        return history.indices.contains { history[$0].sequence == 0 } ? history.filter { $0.sequence != 0 } : history
    }

    /// The highest edit sequence the table's rows hold (0 for none).
    var highestEditSequence: Int64 {
        changes.reduce(0) { highest, entry in max(highest, entry.value.history.map(\.sequence).max() ?? 0) }
    }
}

extension DataTableRow {
    /// The user's edits of the row since it was last applied or reverted, in order, when its
    /// table ``DataTable/recordsEdits``: what a data server replays (see ``RowEdit``).
    ///
    /// ```swift
    /// try row.setValue("open", forKey: "Status")
    /// row.edits.map(\.values)   // [["Status": "open"]]
    /// ```
    public var edits: [RowEdit] {
        slot >= 0 ? table.postedEdits(slot: slot) : []
    }
}

extension DataTable {
    /// The change ids of rows added and removed again (their edits wait for a data server).
    package var vanishedChangeIds: Set<Int> { Set(vanishedChanges.map(\.changeId)) }

    /// Forgets rows added and removed again: an apply that is not a data server's has nothing to do with them.
    package func discardVanishedChanges() { vanishedChanges = [] }
}

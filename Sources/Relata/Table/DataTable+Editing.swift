/// Edit mode and locks at the table level, where the row's record lives.
extension DataTable {
    func checkLock(_ record: RowChanges, slot: Int) throws {
        if record.locked {
            throw error(.rowLocked, "the row is locked while its changes are being applied; wait for the apply to finish", slot: slot)
        }
    }

    func post(slot: Int) throws {
        guard var record = changes[slot], let edit = record.edit else {
            throw error(.invalidRowState, "the row is not in edit mode; call edit() first", slot: slot)
        }
        try checkLock(record, slot: slot)
        if record.state == .addedInEditMode {
            var merged = record.pending
            merged.merge(edit) { $1 }
            if let missing = fields.indices.first(where: { fields[$0].required && !fields[$0].autoIncrement && (merged[$0] ?? .null).isNull }) {
                throw error(.requiredValueMissing, "the field is required; set it before posting the new row", field: missing, slot: slot)
            }
            record.pending = merged
            record.edit = nil
            if case .state(let next) = record.state.after(.posted) { record.state = next }
            setChanges(record, at: slot)
            notifyChanged()
            return
        }
        record.edit = nil
        setChanges(record, at: slot)
        performBatchUpdates {
            for field in edit.keys.sorted() { commit(edit[field]!, field: field, slot: slot) }
        }
    }

    func discard(slot: Int) throws {
        guard var record = changes[slot], record.edit != nil else { return }
        if record.state == .addedInEditMode {
            removeSlots([slot])
            return
        }
        record.edit = nil
        setChanges(record, at: slot)
    }

    func setLocked(_ locked: Bool, slot: Int) {
        var record = changes[slot] ?? RowChanges()
        record.locked = locked
        setChanges(record, at: slot)
    }
}

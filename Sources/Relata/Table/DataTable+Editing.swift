/// Edit mode and locks at the table level, where the row's record lives.
extension DataTable {
    func checkLock(slot: Int) throws {
        if changes.isLocked(slot) {
            throw error(.rowLocked, "the row is locked while its changes are being applied; wait for the apply to finish (if its answer never came, apply again: the batch is sent again first)", slot: slot)
        }
    }

    /// Posts a row's edit: runs the rules, then makes the edit pending.
    /// `checkingRequired` is false for the implicit post of a row added directly,
    /// whose required values are checked when the delta is built instead.
    func post(slot: Int, checkingRequired: Bool = true) throws {
        guard changes.isEditing(slot) else {
            throw error(.invalidRowState, "the row is not in edit mode; call edit() first", slot: slot)
        }
        try checkLock(slot: slot)
        let userEdit = isUserEdit
        let stateBefore = changes.state(slot)
        let kind: RowEdit.Kind = stateBefore == .addedInEditMode ? .insert : .update
        var slot = slot
        if let rules {
            let row = row(atSlot: slot)
            try RuleScope.run { try rules.rowWillPost(row, inserting: stateBefore == .added || stateBefore == .addedInEditMode) }
            // The rules may have set values, or changed other rows: find the row again.
            slot = try self.slot(of: row)
        }
        guard let edit = changes.edit(slot) else { return }
        if changes.state(slot) == .addedInEditMode, var record = changes[slot] {
            var merged = record.pending
            merged.merge(edit) { $1 }
            if checkingRequired, let missing = fields.indices.first(where: { fields[$0].required && !fields[$0].autoIncrement && (merged[$0] ?? .null).isNull }) {
                throw error(.requiredValueMissing, "the field is required; set it before posting the new row", field: missing, slot: slot)
            }
            // Still hidden, so not in the key's index: checked as a row about to be added.
            try checkPrimaryKey(slot: nil) { merged[$0] }
            record.pending = merged
            record.edit = nil
            if case .state(let next) = record.state.after(.posted) { record.state = next }
            setChanges(record, at: slot)
            if userEdit { sealUserEdit(slot: slot, kind: kind) }
            notifyChanged()
            return
        }
        try checkPrimaryKey(slot: slot) { edit[$0] }
        // The record may be clean until the first value is committed: kept meanwhile rather than
        // removed from the store and added again.
        modifyChanges(at: slot, keepingClean: true) { $0.edit = nil }
        holdingNotifications {
            edit.forEachInKeyOrder { field, value in commit(value, field: field, slot: slot) }
            changes.dropIfClean(slot)   // before observers hear of the post
        }
        if userEdit { sealUserEdit(slot: slot, kind: kind) }
    }

    func discard(slot: Int) throws {
        guard var record = changes[slot], record.edit != nil else { return }
        if record.state == .addedInEditMode {
            removeSlots([slot])
            return
        }
        record.edit = nil
        dropOpenEdit(in: &record)
        setChanges(record, at: slot)
    }

    func setLocked(_ locked: Bool, slot: Int) {
        changes.setLocked(locked, slot: slot)   // never hides or shows the row
    }
}

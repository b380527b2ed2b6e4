/// The single funnel for every write to a row, from Swift or from rules.
extension DataTable {
    /// Validates a value for a field of a slot and writes it: into the edit
    /// buffer in edit mode, otherwise as the posted value. On error the row is
    /// left exactly as it was.
    func write(_ value: Value, field: Int, slot: Int) throws {
        try checkWritable(slot: slot)
        // The field's flags are read in place: a copy of its definition would retain each of its texts.
        if fields[field].autoIncrement {
            throw error(.readOnlyField, "the field is auto-increment; the data source assigns its value", field: field, slot: slot)
        }
        if fields[field].readOnly {
            throw error(.readOnlyField, "the field is read-only", field: field, slot: slot)
        }
        let checked = try validated(value, field: field, slot: slot)
        let userEdit = isUserEdit
        // The record is changed in place: a copy of it would copy its values and edits too.
        if changes.isEditing(slot) {
            modifyChanges(at: slot) { record in
                record.edit![field] = checked
                if userEdit { noteUserValue(checked, field: field, in: &record) }
            }
            return
        }
        guard rules != nil else {
            if isVisible(slot: slot) { try checkPrimaryKey(slot: slot, changing: [field: checked]) }
            commit(checked, field: field, slot: slot)
            if userEdit { recordUserWrite(checked, field: field, slot: slot) }
            return
        }
        // With rules, a direct change is an edit of its own, posted at once.
        guard postedValue(slot: slot, field: field) != checked else { return }
        modifyChanges(at: slot) { record in
            record.edit = [field: checked]
            if userEdit { noteUserValue(checked, field: field, in: &record) }
        }
        let row = row(atSlot: slot)
        do {
            try post(slot: slot)
        } catch {
            if row.slot >= 0 { try? discard(slot: row.slot) }
            throw error
        }
    }

    func checkWritable(slot: Int) throws {
        try checkLock(slot: slot)
        if changes.state(slot) == .deleted {
            throw error(.invalidRowState, "the row is deleted; cancel the deletion before changing it", slot: slot)
        }
    }

    /// Coerces and checks a value against its field, with an error naming table, field and row.
    func validated(_ value: Value, field: Int, slot: Int?) throws -> Value {
        do {
            return try fields[field].validated(value)
        } catch {
            throw self.error(error.code, error.message, field: field, slot: slot)
        }
    }

    /// Makes an already-validated value the posted value of a field and keeps
    /// state, change id, indexes and caches in step; notifies observers.
    func commit(_ value: Value, field: Int, slot: Int) {
        let old = postedValue(slot: slot, field: field)
        let state = changes.state(slot)
        let isAdded = state == .added || state == .addedInEditMode
        // An original value written back is no longer pending.
        let pending: Value? = isAdded || value != columns[field].value(at: slot) ? value : nil
        guard old != value || pending != changes.pendingValue(slot, field) else { return }
        modifyChanges(at: slot) { record in
            record.pending[field] = pending
            let event: RowEvent = !isAdded && record.pending.isEmpty ? .lastChangeReverted : .fieldChanged
            if case .state(let next) = record.state.after(event) { record.state = next }
            assignChangeId(&record)
        }
        if old != value { valueDidChange(slot: slot, field: field, from: old, to: value) }
    }

    /// Gives a changed row a change id, and takes it away from a row that is unchanged again.
    func assignChangeId(_ record: inout RowChanges) {
        if record.state == .unchanged {
            record.changeId = 0
            record.failureMessage = nil
        } else if record.changeId == 0 {
            record.changeId = nextChangeId
            nextChangeId += 1
        }
    }

    /// Keeps indexes and calculated caches current after a posted value changed, and notifies.
    func valueDidChange(slot: Int, field: Int, from old: Value, to new: Value) {
        guard isVisible(slot: slot) else { return }
        indexes[field]?.move(slot: slot, from: old, to: new)
        invalidateCalculatedValues(slot: slot, field: field)
        notifyChanged()
    }
}

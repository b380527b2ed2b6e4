/// Building deltas from pending changes, and accepting processed ones.
extension DataTable {
    /// Builds the delta of the table's pending changes. The table is not changed.
    ///
    /// Inserts carry new values, deletes old values, updates both — of every
    /// stored field, so that rules re-run by a data server see the row the
    /// client's rules saw. ``Delta/loggedFields`` names the log-changes fields
    /// (primary-key fields always among them): those a data source writes. Rows
    /// added in edit mode and not yet posted are left out.
    ///
    /// ```swift
    /// let delta = try clients.makeDelta()
    /// print(delta.changes.map(\.type))   // [.update, .insert]
    /// ```
    /// - Throws: ``RelataError/Code/requiredValueMissing`` naming the row and field
    ///   when an inserted or updated row lacks a required value.
    public func makeDelta() throws -> Delta {
        try makeDelta(sharing: nil)
    }

    /// ``makeDelta()`` for a data server that has replayed the changes `sent` on this table: a
    /// change's old or new values that are, value for value and as they travel
    /// (``WireIdentity``), those of the sent change with the same id are the sent values
    /// themselves — no copy made, and comparing the answer with what was sent finds them equal
    /// without reading them (one storage compared with itself).
    package func makeDelta(sharingValuesWith sent: Delta) throws -> Delta {
        try makeDelta(sharing: sent)
    }

    private func makeDelta(sharing sent: Delta?) throws -> Delta {
        let logged = fields.indices.filter { fields[$0].logChanges || fields[$0].primaryKey }
        // The rows with a change to send, by change id; records are read in place, not copied.
        var entries: [(changeId: Int, slot: Int)] = []
        entries.reserveCapacity(changes.keys.count)
        for slot in changes.keys where changes.changeId(slot) != 0 && changes.state(slot) != .addedInEditMode {
            entries.append((changes.changeId(slot), slot))
        }
        entries.sort { $0.changeId < $1.changeId }
        let names = FieldNames(unique: fields.map(\.name))
        var sharing = sent.map { SharedValues(sent: $0, names: names.names) }
        var deltaChanges: [DeltaChange] = []
        deltaChanges.reserveCapacity(entries.count)
        for (changeId, slot) in entries {
            let type: DeltaChange.ChangeType
            switch changes.state(slot) {
            case .added: type = .insert
            case .deleted: type = .delete
            case .modified: type = .update
            case .unchanged, .addedInEditMode: continue
            }
            if type != .delete, let missing = fields.indices.first(where: {
                fields[$0].required && !fields[$0].autoIncrement && postedValue(slot: slot, field: $0).isNull
            }) {
                throw error(.requiredValueMissing, "the field is required; set it before applying the changes",
                            field: missing, slot: slot)
            }
            var change = DeltaChange(changeId: changeId, type: type)
            let sentPosition = sharing?.position(of: changeId, near: deltaChanges.count)
            let original = { self.columns[$0].value(at: slot) }, posted = { self.postedValue(slot: slot, field: $0) }
            if type != .insert { change.oldValues = sharing?.oldValues(at: sentPosition, original) ?? FieldValues(names: names, original) }
            if type != .delete { change.newValues = sharing?.newValues(at: sentPosition, posted) ?? FieldValues(names: names, posted) }
            if recordsEdits { change.edits = postedEdits(slot: slot) }
            deltaChanges.append(change)
        }
        if recordsEdits && !vanishedChanges.isEmpty {
            deltaChanges = (deltaChanges + vanishedChanges).sorted { $0.changeId < $1.changeId }
        }
        return Delta(tableName: name, keyFields: keyFieldIndexes.map { fields[$0].name },
                     loggedFields: logged.map { fields[$0].name }, changes: deltaChanges)
    }

    /// Locks the rows of a delta's changes (see ``DataTableRow/lock()``).
    public func lockRows(of delta: Delta) {
        changes.setLocked(true, changeIds: delta.changeIds)
    }

    /// Unlocks the rows of a delta's changes.
    public func unlockRows(of delta: Delta) {
        changes.setLocked(false, changeIds: delta.changeIds)
    }

    /// Folds a processed delta back into the table.
    ///
    /// - A resolved insert or update becomes ``RowState/unchanged``: its current
    ///   values become the originals, then the delta's refreshed values are merged
    ///   in. A refreshed key replaces the row's temporary key everywhere it is
    ///   used: in this table, in lookups and in foreign keys (``addForeignKey(_:references:field:)``).
    /// - A resolved delete leaves the table.
    /// - A failed change stays pending, with its message on ``DataTableRow/failureMessage``,
    ///   so nothing the user typed is lost; rebuilding the delta sends it again.
    /// - A pending (unprocessed) change stays as it is.
    ///
    /// Rows of processed changes are unlocked.
    ///
    /// - Throws: ``RelataError/Code/invalidDelta`` when the delta belongs to another
    ///   table, names a change the table does not have, or carries a refreshed value
    ///   that does not fit its field. The table is not changed then.
    public func accept(_ delta: Delta) throws {
        guard delta.tableName.equalsIgnoringCase(name) else {
            throw RelataError(.invalidDelta, "the delta belongs to table \(delta.tableName)", table: name)
        }
        // Rows added and removed again: whatever the data source made of them, nothing is left to do here.
        var delta = delta
        if !vanishedChanges.isEmpty {
            let vanished = Set(vanishedChanges.map(\.changeId))
            let processed = Set(delta.changes.filter { vanished.contains($0.changeId) && $0.status != .pending }.map(\.changeId))
            vanishedChanges.removeAll { processed.contains($0.changeId) }
            delta.changes.removeAll { vanished.contains($0.changeId) }
        }
        let ids = delta.changeIds
        if ids.count != delta.changes.count {
            var seen = Set<Int>()
            for index in delta.changes.indices where !seen.insert(delta.changes[index].changeId).inserted {
                throw RelataError(.invalidDelta, "the delta has change \(delta.changes[index].changeId) twice", table: name)
            }
        }
        let slotsById = changes.slots(ofChangeIds: ids)
        // Each change's slot, and the refreshed values of the few that have some (changes read in place).
        var slots: [Int] = []
        slots.reserveCapacity(delta.changes.count)
        var refreshed: [Int: [(field: Int, value: Value)]] = [:]
        for index in delta.changes.indices {
            let changeId = delta.changes[index].changeId
            guard let slot = slotsById[changeId] else {
                throw RelataError(.invalidDelta, "the delta has change \(changeId), which no row of the table has", table: name)
            }
            slots.append(slot)
            let values = delta.changes[index].refreshedValues
            guard delta.changes[index].status == .resolved, !values.isEmpty else { continue }
            refreshed[index] = try values.keys.sorted().map { fieldName in
                guard let field = fieldIndex(named: fieldName) else {
                    throw RelataError(.invalidDelta, "change \(changeId) refreshes field '\(fieldName)', which the table does not have",
                                      table: name, field: fieldName)
                }
                do throws(CoercionFailure) {
                    return (field, try fields[field].type.coerced(values[fieldName]!))
                } catch {
                    throw RelataError(.invalidDelta, "change \(changeId) refreshes it with \(error.message)",
                                      table: name, field: fieldName, row: rowLabel(slot: slot))
                }
            }
        }
        holdingNotifications {
            var removed: [Int] = []
            var replacements: [(keyField: Int, old: Value, new: Value)] = []
            for index in delta.changes.indices {
                let slot = slots[index]
                guard var record = changes[slot] else { continue }
                record.locked = false
                switch delta.changes[index].status {
                case .pending:
                    setChanges(record, at: slot)
                case .failed:
                    record.failureMessage = delta.changes[index].message ?? "the data source rejected the change"
                    setChanges(record, at: slot)
                case .resolved where record.state == .deleted:
                    removed.append(slot)
                case .resolved:
                    replacements += fold(record, refreshing: refreshed[index] ?? [], slot: slot)
                }
            }
            removeSlots(removed.sorted())
            for replacement in replacements {
                replaceKey(field: replacement.keyField, old: replacement.old, new: replacement.new)
            }
            notifyChanged()
        }
    }

    /// Makes a resolved row's current values its originals and merges refreshed
    /// values; returns the key values that changed, for replacement elsewhere.
    private func fold(_ record: RowChanges, refreshing refreshed: [(field: Int, value: Value)], slot: Int)
        -> [(keyField: Int, old: Value, new: Value)] {
        let before = refreshed.map { postedValue(slot: slot, field: $0.field) }
        keysOfLoadedRows = nil
        if record.state == .added || record.state == .addedInEditMode {   // a new row's unset fields are NULL
            for field in fields.indices { columns[field].set(record.pending[field] ?? .null, at: slot) }
        } else {
            record.pending.forEach { field, value in columns[field].set(value, at: slot) }   // the other fields keep their originals
        }
        for (field, value) in refreshed { columns[field].set(value, at: slot) }
        var clean = RowChanges()
        clean.edit = record.edit
        clean.history = record.history.filter { $0.sequence == 0 }
        setChanges(clean, at: slot)
        var replaced: [(keyField: Int, old: Value, new: Value)] = []
        for (index, (field, value)) in refreshed.enumerated() where before[index] != value {
            indexes[field]?.move(slot: slot, from: before[index], to: value)
            invalidateCalculatedValues(slot: slot, field: field)
            if !before[index].isNull { replaced.append((field, before[index], value)) }
        }
        return replaced
    }

    /// Replaces a key value in every field that refers to `field` of this table.
    private func replaceKey(field: Int, old: Value, new: Value) {
        for reference in references where reference.keyField == field {
            reference.table?.replaceValue(field: reference.field, old: old, new: new)
        }
    }

    /// Replaces `old` by `new` in one field of every row: originals, pending and
    /// edit values alike. The rows' states do not change.
    func replaceValue(field: Int, old: Value, new: Value) {
        guard let value = try? fields[field].type.coerced(new) else { return }
        keysOfLoadedRows = nil
        holdingNotifications {
            for slot in 0..<slotCount {
                let posted = postedValue(slot: slot, field: field)
                if columns[field].value(at: slot) == old { columns[field].set(value, at: slot) }
                if var record = changes[slot] {
                    if record.pending[field] == old { record.pending[field] = value }
                    if record.edit?[field] == old { record.edit![field] = value }
                    changes[slot] = record
                }
                if posted == old && isVisible(slot: slot) {
                    indexes[field]?.move(slot: slot, from: old, to: value)
                    invalidateCalculatedValues(slot: slot, field: field)
                    notifyChanged()
                }
            }
        }
    }

    /// The delta with only the changes the table still has (a row's or a vanished row's): a
    /// batch saved before an app restart may name rows added and removed again, which a
    /// briefcase does not keep.
    package func keepingKnownChanges(of delta: Delta) -> Delta {
        let ids = delta.changeIds
        if changes.count(ofChangeIds: ids) == ids.count { return delta }   // every change a row's: the usual case
        let known = Set(changes.slots(ofChangeIds: ids).keys).union(vanishedChangeIds)
        var delta = delta
        delta.changes.removeAll { !known.contains($0.changeId) }
        return delta
    }
}

/// What a data server needs to replay a delta that arrived from a client onto the
/// stored rows, so the row events run there too: the replayed changes keep the
/// client's change ids and temporary keys, so its answer maps straight back.
extension DataTable {
    /// Makes change ids up to `highest` free for ``adoptChangeId(_:for:)``: changes made
    /// from now on (by rules, say) get higher ids.
    package func reserveChangeIds(through highest: Int) {
        if highest >= nextChangeId { nextChangeId = highest == Int.max ? Int.max : highest + 1 }
    }

    /// Gives a changed row the change id its change had where it was made. The caller
    /// reserved the ids (``reserveChangeIds(through:)``) before any row changed and adopts
    /// each at most once, so no other row can hold it (checked in debug builds only: a
    /// scan per adoption would make replaying a large delta quadratic).
    ///
    /// - Throws: ``RelataError/Code/invalidDelta`` when the row has no change or the id is not positive.
    package func adoptChangeId(_ changeId: Int, for row: DataTableRow) throws {
        let slot = try slot(of: row)
        guard changes.changeId(slot) != 0 else {
            throw RelataError(.invalidDelta, "change \(changeId) changes nothing in the row", table: name, row: rowLabel(slot: slot))
        }
        guard changeId > 0 else {
            throw RelataError(.invalidDelta, "change ids are positive, not \(changeId)", table: name, row: rowLabel(slot: slot))
        }
        assert(!changes.contains(where: { $0.key != slot && $0.value.changeId == changeId }), "change id \(changeId) adopted twice")
        changes.setChangeId(changeId, slot: slot)   // in place: the record keeps its state, so nothing else moves
    }

    /// Gives a row added here the temporary (negative) key its insert had where it was
    /// made, so rows of the same delta that refer to it still do.
    ///
    /// - Throws: ``RelataError/Code/invalidDelta`` when the field is not auto-increment, the
    ///   row was not added here, the key is not negative, or another row holds it.
    package func adoptTemporaryKey(_ key: Int64, field name: String, for row: DataTableRow) throws {
        let slot = try slot(of: row)
        guard let field = fieldIndex(named: name), fields[field].autoIncrement else {
            throw RelataError(.invalidDelta, "the field is not an auto-increment field", table: self.name, field: name)
        }
        guard var record = changes[slot], record.state == .added, key < 0 else {
            throw RelataError(.invalidDelta, "only a new row takes a temporary (negative) key, not \(key)", table: self.name, field: name)
        }
        let current = postedValue(slot: slot, field: field)
        guard current != .integer(key) else { return }
        if let holder = try index(forField: fields[field].name).slots(for: .integer(key)).first(where: { $0 != slot }) {
            throw RelataError(.invalidDelta, "the temporary key \(key) is used by \(rowLabel(slot: holder))", table: self.name, field: name)
        }
        record.pending[field] = .integer(key)
        setChanges(record, at: slot)
        valueDidChange(slot: slot, field: field, from: current, to: .integer(key))
        if key <= nextTemporaryKey { nextTemporaryKey = key == Int64.min ? Int64.min : key - 1 }
    }
}

extension DataTable {
    /// Makes `key` the temporary key the next added row gets, if no row holds it: a server
    /// replaying a client's insert gives the row the client's key before its rules run, and
    /// the rows its rules add meanwhile the keys that follow, as on the client.
    package func prepareTemporaryKey(_ key: Int64, field name: String) {
        guard key < 0, let field = fieldIndex(named: name), fields[field].autoIncrement,
              (try? index(forField: fields[field].name).slots(for: .integer(key)).isEmpty) == true else { return }
        nextTemporaryKey = key
    }

    /// The changed rows (those a delta would hold) by change id.
    package func changedRowsByChangeId() -> [Int: DataTableRow] {
        var rows: [Int: DataTableRow] = [:]
        for (slot, record) in changes where record.isPendingChange {
            rows[record.changeId] = row(atSlot: slot)
        }
        return rows
    }
}

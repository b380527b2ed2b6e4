/// Adding, removing and cancelling rows; edit mode; locks.
extension DataTable {
    /// Adds a row with no values but the fields' defaults and a temporary key.
    ///
    /// ```swift
    /// let row = try clients.addNewRow()
    /// row.rowState   // .added
    /// ```
    @discardableResult
    public func addNewRow() throws -> DataTableRow {
        try addNewRow(values: [:], inEditMode: false)
    }

    /// Adds a row with the given values.
    ///
    /// Fields not named get their default value; auto-increment fields get a
    /// temporary negative key (-1, -2, …) until the data source assigns a real
    /// one. A row added in edit mode is invisible to the table (not in ``rows``,
    /// ``rowCount``, filters, indexes or deltas) until ``DataTableRow/post()``;
    /// ``DataTableRow/discard()`` removes it again.
    ///
    /// ```swift
    /// let row = try clients.addNewRow(values: ["ClientName": "Initech"], inEditMode: true)
    /// try row.setValue(0.1, forKey: "ClientDiscount")
    /// try row.post()
    /// ```
    ///
    /// - Throws: ``RelataError/Code/unknownField`` for a name the table does not have,
    ///   ``RelataError/Code/readOnlyField`` for a value given to an auto-increment or read-only field,
    ///   and the value errors of ``DataTableRow/setValue(_:forKey:)``. Nothing is added on error.
    @discardableResult
    public func addNewRow(values: [String: Value], inEditMode: Bool = false) throws -> DataTableRow {
        var pending: [Int: Value] = [:]
        for (index, field) in fields.enumerated() {
            if let defaultValue = field.defaultValue { pending[index] = try validated(defaultValue, field: index, slot: nil) }
        }
        var given: [(field: Int, value: Value)] = []
        for name in values.keys.sorted() {
            let index = try requireFieldIndex(name)
            let field = fields[index]
            if field.autoIncrement {
                throw error(.readOnlyField, "the field is auto-increment; leave it out and the row gets a temporary key", field: index)
            }
            if field.readOnly {
                throw error(.readOnlyField, "the field is read-only", field: index)
            }
            given.append((index, try validated(values[name]!, field: index, slot: nil)))
        }
        // Without rules the given values are part of the new row; with rules they are
        // written after `onNewRow`, as a user types over the defaults it set.
        if rules == nil { for (index, value) in given { pending[index] = value } }
        let temporaryKeys = fields.indices.filter { fields[$0].autoIncrement }
        for index in temporaryKeys { pending[index] = .integer(nextTemporaryKey) }
        if rules == nil && !inEditMode {
            try checkPrimaryKey(slot: nil, changing: pending)
        }
        if !temporaryKeys.isEmpty { nextTemporaryKey -= 1 }

        let slot = appendSlot(originals: Array(repeating: .null, count: fields.count))
        // With rules, the new row starts hidden and in edit mode, so `onNewRow`
        // can set values; a direct addition is then posted like any change.
        let hidden = inEditMode || rules != nil
        var record = RowChanges(state: hidden ? .addedInEditMode : .added, pending: ValuesByFieldIndex(pending))
        if hidden { record.edit = [:] }
        let userEdit = isUserEdit
        if userEdit { record.history = [RowEdit(sequence: 0, kind: .insert, values: given.reduce(into: [:]) { $0[fields[$1.field].name] = $1.value })] }
        assignChangeId(&record)
        setChanges(record, at: slot)
        let row = row(atSlot: slot)
        if let rules {
            do {
                try RuleScope.run { try rules.rowDidAdd(row) }
                for (index, value) in given { try row.setValue(value, forKey: fields[index].name) }
                if !inEditMode { try post(slot: row.slot, checkingRequired: false) }
            } catch {
                if row.slot >= 0 { removeSlots([row.slot]) }
                throw error
            }
        } else if !inEditMode {
            updateIndexes(slot: slot, becameVisible: true)
            if userEdit { sealUserEdit(slot: slot, kind: .insert) }
            notifyChanged()
        }
        return row
    }

    /// Loads rows given by field name (case-insensitively) as original data; a field a
    /// row does not name gets its default value (NULL when it has none), as a database
    /// fills a column an insert leaves out; a field named with `.null` is NULL.
    ///
    /// ```swift
    /// try clients.loadRows(named: [["ClientId": 7, "ClientName": "Initech"]])
    /// ```
    /// - Throws: ``RelataError/Code/unknownField`` naming the row (counting from 1) for a
    ///   name the table does not have, before anything is loaded; the value errors of ``loadRows(_:)``.
    public func loadRows(named rows: [[String: Value]]) throws {
        let ordered = try rows.enumerated().map { position, row -> [Value] in
            var values = defaultValuesForLoad
            for (name, value) in row {
                guard let index = fieldIndex(named: name) else {
                    throw RelataError(.unknownField, "the table has no such field (fields: \(fields.map(\.name).joined(separator: ", ")))",
                                      table: self.name, field: name, row: "row \(position + 1) to load")
                }
                values[index] = value
            }
            return values
        }
        try loadRows(ordered)
    }

    /// Loads rows as original data (state ``RowState/unchanged``), as a data source delivers them.
    ///
    /// Each row lists one value per stored field, in field order.
    ///
    /// ```swift
    /// try clients.loadRows([[1, "Acme", 0.05], [2, "Globex", .null]])
    /// ```
    ///
    /// - Throws: a value error naming the field and the row's position in `rows`
    ///   (counting from 1); rows before it stay loaded.
    public func loadRows<Rows: Sequence>(_ rows: Rows) throws where Rows.Element == [Value] {
        reserveCapacity(slotCount + rows.underestimatedCount)
        var iterator = rows.makeIterator()
        var position = 0
        try appendOriginalRows {
            position += 1
            guard let values = iterator.next() else { return nil }
            guard values.count == fields.count else {
                throw RelataError(.invalidImport, "row \(position) has \(values.count) values, the table has \(fields.count) fields",
                                  table: name)
            }
            return (values, .row(position))
        }
    }

    /// Each field's default value (NULL without one), for the fields a loaded row does not name.
    var defaultValuesForLoad: [Value] {
        fields.map { field in field.defaultValue.flatMap { try? field.type.coerced($0) } ?? .null }
    }

    /// Where a loaded row came from, as its errors name it; made into text only for an error
    /// (a text made for each row was a tenth of loading it).
    enum LoadLocation {
        /// The row's position among the rows to load (counting from 1).
        case row(Int)
        /// Its line in a file.
        case line(Int)
        /// Its object's position in a JSON array (counting from 1).
        case object(Int)

        var text: String {
            switch self {
            case .row(let position): "row \(position) to load"
            case .line(let line): "line \(line)"
            case .object(let position): "object \(position)"
            }
        }
    }

    /// Appends rows of original values until `next` returns nil, checking each row as a
    /// database would: each value's type, required values, and a primary key that is set
    /// and not used by another row. Errors name the row by `location` (its line in a file).
    func appendOriginalRows(_ next: () throws -> (values: [Value], location: LoadLocation)?) throws {
        var coerced = [Value](repeating: .null, count: fields.count)
        let required = requiredFieldIndexesForLoad
        try withKeysForLoad { keys in
            try holdingNotifications {
                while let (values, location) = try next() {
                    for index in fields.indices {
                        do throws(CoercionFailure) {
                            coerced[index] = try fields[index].type.coerced(values[index])
                        } catch {
                            throw RelataError(error.code, error.message, table: name, field: fields[index].name, location: location.text)
                        }
                    }
                    if let missing = required.first(where: { coerced[$0].isNull }) {
                        throw requiredValueMissingOnLoad(field: missing, location: location)
                    }
                    if !keyFieldIndexes.isEmpty, !keys.insert(keyFieldIndexes.map { coerced[$0] }) {
                        throw keyErrorOnLoad(keyFieldIndexes.map { coerced[$0] }, location: location)
                    }
                    let slot = appendSlot(originals: coerced)
                    if !indexes.isEmpty { updateIndexes(slot: slot, becameVisible: true) }
                    notifyChanged()
                }
            }
        }
    }

    /// The fields a loaded row must have a value for.
    var requiredFieldIndexesForLoad: [Int] {
        fields.indices.filter { fields[$0].required && !fields[$0].autoIncrement }
    }

    /// Runs a load with the keys of the rows the table holds, for the load to check new keys
    /// against (and add them), and keeps them for the next load.
    ///
    /// Keys are checked against a set made for the load rather than the key's index, which
    /// would cost a million-row load its time and memory; the index is built on first use.
    func withKeysForLoad(_ load: (inout KeySet) throws -> Void) rethrows {
        var keys = KeySet()
        if let kept = keysOfLoadedRows, kept.slots == slotCount, kept.generation == structureGeneration, changes.keys.isEmpty {
            // Nothing but loads changed the table since the last one: its keys are still these.
            keys = kept.keys
        } else if !keyFieldIndexes.isEmpty {
            for slot in visibleSlots { _ = keys.insert(keyFieldIndexes.map { postedValue(slot: slot, field: $0) }) }
        }
        keysOfLoadedRows = nil
        try load(&keys)
        // After a failure the set may hold keys of rows not loaded: the next load collects them again.
        if changes.keys.isEmpty { keysOfLoadedRows = (slotCount, structureGeneration, keys) }
    }

    func requiredValueMissingOnLoad(field: Int, location: LoadLocation) -> RelataError {
        RelataError(.requiredValueMissing, "the field is required and the row has no value for it",
                    table: name, field: fields[field].name, location: location.text)
    }

    /// A loaded row's key that is NULL or in use: the same error a write gets, at the row's location.
    func keyErrorOnLoad(_ key: [Value], location: LoadLocation) -> RelataError {
        do {
            try checkPrimaryKey(slot: nil, changing: Dictionary(uniqueKeysWithValues: zip(keyFieldIndexes, key).map { ($0, $1) }))
            throw error(.constraintViolation, "the primary key (\(keyText(key))) is used twice")
        } catch var error as RelataError {
            error.location = location.text
            return error
        } catch {
            return RelataError(.constraintViolation, "\(error)", table: name, location: location.text)
        }
    }

    /// Removes a row: an unchanged or modified row becomes ``RowState/deleted``
    /// (kept until the deletion is applied, and listed in ``deletedRows``);
    /// an added row leaves the table at once.
    ///
    /// ```swift
    /// try clients.removeRow(clients.rows[0])
    /// ```
    public func removeRow(_ row: DataTableRow) throws {
        let slot = try slot(of: row)
        try checkWritable(slot: slot)
        let record = changes[slot] ?? RowChanges()
        if record.edit != nil {
            throw error(.invalidRowState, "the row is in edit mode; post or discard the edit first", slot: slot)
        }
        if case .rejected(let reason) = record.state.after(.removed) {
            throw error(.invalidRowState, reason, slot: slot)
        }
        let userEdit = isUserEdit
        if let rules { try RuleScope.run { try rules.rowWillRemove(row) } }
        let removed = try self.slot(of: row)
        let vanishing = userEdit ? vanishedChange(slot: removed) : nil
        try remove(slot: removed)
        if let vanishing, !row.isInTable { vanishedChanges.append(vanishing) }
        if userEdit, row.isInTable { sealUserEdit(slot: row.slot, kind: .delete) }
    }

    private func remove(slot: Int) throws {
        let record = changes[slot] ?? RowChanges()
        switch record.state.after(.removed) {
        case .rejected(let reason):
            throw error(.invalidRowState, reason, slot: slot)
        case .detached:
            removeSlots([slot])
        case .state(let next):
            var updated = record
            updated.state = next
            assignChangeId(&updated)
            setChanges(updated, at: slot)
        }
        notifyChanged()
    }

    /// Cancels a row's change: an added row is removed from the table; any other
    /// row returns to its original values and ``RowState/unchanged``.
    ///
    /// ```swift
    /// let row = try clients.addNewRow()
    /// try clients.cancelChange(for: row)   // the row is gone
    /// ```
    public func cancelChange(for row: DataTableRow) throws {
        let slot = try slot(of: row)
        try checkLock(slot: slot)
        let state = changes.state(slot)
        if state == .added || state == .addedInEditMode {
            removeSlots([slot])
            notifyChanged()
        } else {
            try row.cancel()
        }
    }

    /// Cancels every pending change of the table: added rows are removed,
    /// deleted rows come back, modified rows get their original values.
    ///
    /// - Throws: ``RelataError/Code/rowLocked`` if any changed row is locked; nothing is cancelled then.
    public func cancelAllChanges() throws {
        if let locked = changes.first(where: { $0.value.locked }) {
            try checkLock(slot: locked.key)
        }
        vanishedChanges = []
        let added = changes.filter { $0.value.state == .added || $0.value.state == .addedInEditMode }.map(\.key).sorted()
        holdingNotifications {
            for slot in changes.keys.sorted() where !added.contains(slot) {
                revertAll(slot: slot, dropEdit: true)
            }
            removeSlots(added)
            notifyChanged()
        }
    }

    /// Returns a slot to its original values (and drops the edit buffer if asked).
    func revertAll(slot: Int, dropEdit: Bool) {
        guard var record = changes[slot] else { return }
        let changed = Array(record.pending.keys)
        let olds = changed.map { postedValue(slot: slot, field: $0) }
        let wasHidden = record.isHidden
        record.pending = [:]
        record.history.removeAll { $0.sequence != 0 }
        if dropEdit {
            record.edit = record.state == .addedInEditMode ? [:] : nil
            record.history = []
        }
        if case .state(let next) = record.state.after(.cancelled) { record.state = next }
        assignChangeId(&record)
        setChanges(record, at: slot)
        if !wasHidden {
            for (field, old) in zip(changed, olds) {
                indexes[field]?.move(slot: slot, from: old, to: postedValue(slot: slot, field: field))
                invalidateCalculatedValues(slot: slot, field: field)
            }
        }
        notifyChanged()
    }

    /// The slot of a row of this table, or an error for a row of another table or one no longer in it.
    func slot(of row: DataTableRow) throws -> Int {
        guard row.table === self, row.slot >= 0 else {
            throw RelataError(.foreignRow, row.slot < 0 ? "the row is no longer in the table" : "the row belongs to table \(row.table.name)",
                              table: name)
        }
        return row.slot
    }
}

import Foundation

/// One row of a ``DataTable``: its values by field name, and its changes.
///
/// A row is a reference owned by its table; every array the table returns
/// holds the same row objects, so a change made through one is seen everywhere.
///
/// ```swift
/// let row = clients.rows[0]
/// try row.setValue("Acme Ltd", forKey: "ClientName")
/// row["ClientName"]                         // "Acme Ltd"
/// row.originalValue(forKey: "ClientName")   // "Acme"
/// row.rowState                              // .modified
/// try row.revertValue(forKey: "ClientName")
/// row.rowState                              // .unchanged
/// ```
@dynamicMemberLookup
public final class DataTableRow {
    /// The table that contains this row.
    public let table: DataTable
    /// The row's position in the table's storage; -1 once the row has left the table.
    var slot: Int

    init(table: DataTable, slot: Int) {
        self.table = table
        self.slot = slot
    }

    /// False once the row has left its table — an addition cancelled, a deletion
    /// applied — after which reading or writing it traps.
    ///
    /// ```swift
    /// try adapter.applyChanges(for: clients)   // applies a deletion
    /// removed.isInTable                         // false
    /// ```
    public var isInTable: Bool { slot >= 0 }

    /// The row leaves its table: it no longer has a slot, and the table forgets it.
    func detach() {
        if slot >= 0 { table.handles[slot] = nil }
        slot = -1
    }

    deinit {
        if slot >= 0 { table.handles[slot] = nil }
    }

    /// Traps with a clear message when the row has left its table (a programmer error).
    private var liveSlot: Int {
        precondition(slot >= 0, "the row has been removed from table \(table.name)")
        return slot
    }

    private var record: RowChanges? { table.changes[liveSlot] }

    // MARK: Values

    /// The current value of a stored, calculated or lookup field (in edit mode, the edited value).
    ///
    /// ```swift
    /// let name = try row.value(forKey: "ClientName")
    /// ```
    /// - Throws: ``RelataError/Code/unknownField``, or ``RelataError/Code/calculationFailed`` when a calculated field's function throws.
    public func value(forKey key: String) throws -> Value {
        if let field = table.fieldIndex(named: key) { return table.currentValue(slot: liveSlot, field: field) }
        return try table.virtualValue(named: key, slot: liveSlot)
    }

    /// The current value converted to a Swift type; nil for NULL.
    ///
    /// ```swift
    /// let discount = try row.value(forKey: "ClientDiscount", as: Double.self)   // Double?
    /// ```
    /// - Throws: ``RelataError/Code/typeMismatch`` when the value is not a `T`.
    public func value<T: ValueConvertible>(forKey key: String, as type: T.Type) throws -> T? {
        let value = try value(forKey: key)
        if value.isNull { return nil }
        guard let converted = T(relataValue: value) else {
            throw RelataError(.typeMismatch, "\(value) (\(value.kindName)) cannot be read as \(T.self)",
                              table: table.name, field: key, row: table.rowLabel(slot: liveSlot))
        }
        return converted
    }

    /// Sets a field's value. The value is checked against the field's type
    /// (with lossless coercion, e.g. an integer into a Float field), size,
    /// precision and scale, required and read-only flags; on error the row is
    /// left exactly as it was.
    ///
    /// ```swift
    /// try row.setValue("Acme Ltd", forKey: "ClientName")
    /// try row.setValue(.null, forKey: "ContactPhone")
    /// ```
    /// - Throws: ``RelataError`` naming table, field and row.
    public func setValue(_ value: Value, forKey key: String) throws {
        let slot = liveSlot
        guard let field = table.fieldIndex(named: key) else {
            if table.isVirtualField(named: key) {
                throw RelataError(.readOnlyField, "calculated and lookup fields cannot be set",
                                  table: table.name, field: key, row: table.rowLabel(slot: slot))
            }
            throw table.unknownField(key)
        }
        try table.write(value, field: field, slot: slot)
    }

    /// Sets a field from a Swift value (`String`, `Int`, `Double`, `Date`, an optional, …).
    public func setValue<T: ValueConvertible>(_ value: T, forKey key: String) throws {
        try setValue(value.relataValue, forKey: key)
    }

    /// The value of a field, as `row["ClientName"]`.
    ///
    /// Reading an unknown field or writing an invalid value traps with the
    /// error's message; use ``value(forKey:)`` and `setValue(_:forKey:)`
    /// where the field name or value comes from outside the program.
    public subscript(key: String) -> Value {
        get {
            do { return try value(forKey: key) } catch { preconditionFailure("\(error)") }
        }
        set {
            do { try setValue(newValue, forKey: key) } catch { preconditionFailure("\(error)") }
        }
    }

    /// The value of a field as a property: `row.ClientName`. Traps like the subscript.
    public subscript(dynamicMember key: String) -> Value {
        get { self[key] }
        set { self[key] = newValue }
    }

    /// The value of a field as the data source last delivered it; nil for a row added locally.
    ///
    /// ```swift
    /// row.originalValue(forKey: "ClientName")   // "Acme" while the current value is "Acme Ltd"
    /// ```
    public func originalValue(forKey key: String) -> Value? {
        guard let field = table.fieldIndex(named: key) else { return nil }
        return table.originalValue(slot: liveSlot, field: field)
    }

    /// The current value of the stored field at `field` (an index into the table's fields).
    package func value(at field: Int) -> Value {
        table.currentValue(slot: liveSlot, field: field)
    }

    /// The original value of the stored field at `field` (an index into the table's fields),
    /// nil for a row added since the last accept.
    package func originalValue(at field: Int) -> Value? {
        table.originalValue(slot: liveSlot, field: field)
    }

    /// Every field's original value, in the table's order (null for each of an added row).
    package var originalValues: [Value] { table.originalValues(slot: liveSlot) }

    /// How errors name this row: its primary-key values (`row (ClientId=3)`), or its position.
    public var label: String {
        slot >= 0 ? table.rowLabel(slot: slot) : "a removed row"
    }

    /// The number of stored fields.
    public var fieldCount: Int { table.fields.count }

    // MARK: State

    /// The row's change state.
    public var rowState: RowState { table.state(ofSlot: liveSlot) }

    /// True when the row has a pending change (`rowState != .unchanged`).
    public var isChanged: Bool { rowState != .unchanged }

    /// The original's name for ``isChanged``, kept for code ported from Data Abstract.
    @available(*, deprecated, renamed: "isChanged")
    public var changed: Bool { isChanged }

    /// Ties the row to its ``DeltaChange``; 0 while the row has no change.
    public var changeId: Int { table.changes.changeId(liveSlot) }

    /// The message of the last failed attempt to apply this row's change; nil once it applies or is cancelled.
    public var failureMessage: String? { record?.failureMessage }

    /// The names of the fields whose current value differs from the original.
    public var changedFieldNames: [String] {
        (record?.pending.keys.sorted() ?? []).map { table.fields[$0].name }
    }

    /// Cancels every change of the row (and its edit, if any) and restores the
    /// original values. A row added locally stays in the table with its values
    /// cleared; ``DataTable/cancelChange(for:)`` removes it.
    ///
    /// - Throws: ``RelataError/Code/constraintViolation`` when another row has taken the
    ///   row's original primary key meanwhile; the row is left as it was.
    public func cancel() throws {
        try table.checkLock(slot: liveSlot)
        try table.checkOriginalKeyIsFree(slot: liveSlot)
        table.revertAll(slot: liveSlot, dropEdit: true)
    }

    /// Reverts all changes of the row: the same as ``cancel()``.
    public func revert() throws { try cancel() }

    /// Cancels the change of one field, restoring its original value. When no
    /// other change is left the row returns to ``RowState/unchanged``.
    ///
    /// ```swift
    /// try row.cancelChange(forKey: "ClientName")
    /// ```
    public func cancelChange(forKey key: String) throws {
        let slot = liveSlot
        let field = try table.requireFieldIndex(key)
        guard var record = self.record else { return }
        try table.checkLock(slot: slot)
        if record.edit?[field] != nil {
            record.edit![field] = nil
            if let open = record.history.indices.last, record.history[open].sequence == 0 {
                record.history[open].values[table.fields[field].name] = nil
            }
            table.setChanges(record, at: slot)
        }
        guard record.pending[field] != nil else { return }
        if table.keyFieldIndexes.contains(field) { try table.checkOriginalKeyIsFree(slot: slot) }
        let userEdit = table.isUserEdit && record.edit == nil
        let original = table.originalValue(slot: slot, field: field) ?? .null
        table.commit(original, field: field, slot: slot)
        if var updated = table.changes[slot], updated.state == .added {
            updated.pending[field] = nil
            table.setChanges(updated, at: slot)
        }
        if userEdit { table.recordUserWrite(original, field: field, slot: slot) }
    }

    /// Reverts one field: the same as ``cancelChange(forKey:)``.
    public func revertValue(forKey key: String) throws { try cancelChange(forKey: key) }

    // MARK: Two-phase editing

    /// True between ``edit()`` and ``post()`` or ``discard()``.
    public var isInEditMode: Bool { record?.edit != nil }

    /// The original's name for ``isInEditMode``, kept for code ported from Data Abstract.
    @available(*, deprecated, renamed: "isInEditMode")
    public var inEditMode: Bool { isInEditMode }

    /// Starts an edit: changes made now stay in an edit buffer, invisible to the
    /// table (filters, indexes, deltas, notifications), until ``post()``.
    /// Calling it on a row already in edit mode does nothing.
    public func edit() throws {
        let slot = liveSlot
        try table.checkWritable(slot: slot)
        guard !table.changes.isEditing(slot) else { return }
        table.modifyChanges(at: slot) { $0.edit = [:] }
    }

    /// Ends an edit, making its changes pending changes of the row. A row added
    /// in edit mode joins the table.
    ///
    /// - Throws: ``RelataError/Code/invalidRowState`` outside edit mode;
    ///   ``RelataError/Code/requiredValueMissing`` when a row added in edit mode
    ///   lacks a required value (the row stays in edit mode, nothing lost).
    public func post() throws {
        try table.post(slot: liveSlot)
    }

    /// Ends an edit, throwing its changes away: the row is exactly as it was
    /// before ``edit()``, earlier pending changes included. A row added in edit
    /// mode leaves the table. Outside edit mode it does nothing.
    public func discard() throws {
        try table.discard(slot: liveSlot)
    }

    /// Changes several fields as one edit: all of them or, on any error, none.
    ///
    /// Outside edit mode the values are written in an edit that is then posted,
    /// so a table's rules see the row once, with every value (a single value is
    /// written directly); in edit mode they join the open edit.
    ///
    /// ```swift
    /// try line.setValues(["Quantity": 3, "Discount": 0.1])
    /// ```
    /// - Throws: the errors of ``setValue(_:forKey:)`` and ``post()``; the row is then as it was.
    public func setValues(_ values: [String: Value]) throws {
        let ordered = values.sorted { $0.key < $1.key }
        if ordered.count == 1 || isInEditMode {
            for (key, value) in ordered { try setValue(value, forKey: key) }
            return
        }
        try edit()
        do {
            for (key, value) in ordered { try setValue(value, forKey: key) }
            try post()
        } catch {
            try? discard()
            throw error
        }
    }

    // MARK: Locking

    /// True while the row is locked.
    public var isLocked: Bool { record?.locked ?? false }

    /// The original's name for ``isLocked``, kept for code ported from Data Abstract.
    @available(*, deprecated, renamed: "isLocked")
    public var locked: Bool { isLocked }

    /// Locks the row: until ``unlock()``, every change fails with ``RelataError/Code/rowLocked``.
    /// Adapters lock rows while their changes are in flight.
    public func lock() { table.setLocked(true, slot: liveSlot) }

    /// Unlocks the row.
    public func unlock() { table.setLocked(false, slot: liveSlot) }
}

extension DataTableRow: CustomStringConvertible {
    /// `<DataTableRow Clients (ClientId=1) modified>`.
    public var description: String {
        guard slot >= 0 else { return "<DataTableRow \(table.name) removed>" }
        return "<DataTableRow \(table.name) \(table.rowLabel(slot: slot).replacingOccurrences(of: "row ", with: "")) \(rowState.rawValue)>"
    }
}

@available(*, unavailable, message: "A row belongs to its table's isolation domain.")
extension DataTableRow: Sendable {}

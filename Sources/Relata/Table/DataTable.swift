import Foundation

/// An in-memory table whose rows track their own changes.
///
/// A table has a ``name``, its stored ``fields`` and ``rows``. Each row keeps its
/// original values, its pending changes and, in edit mode, an edit buffer; the
/// table turns the pending changes into a ``Delta`` to apply to a data source,
/// and ``accept(_:)`` folds the processed delta back in.
///
/// ```swift
/// let clients = try DataTable(name: "Clients", fields: [
///     FieldDefinition("ClientId", .autoInc, primaryKey: true),
///     FieldDefinition("ClientName", .string, size: 50, required: true),
/// ])
/// try clients.loadRows([[1, "Acme"], [2, "Globex"]])
/// let acme = clients.rows[0]
/// try acme.setValue("Acme Ltd", forKey: "ClientName")
/// acme.rowState                          // .modified
/// acme.originalValue(forKey: "ClientName") // "Acme"
/// ```
///
/// Storage is column-oriented: one typed buffer per field holds the original
/// values, and only changed rows carry an overlay. Row objects are handles
/// created on demand; the same row is always the same object, in every array
/// the table returns.
///
/// A table is not thread-safe: use it from one isolation domain (one actor,
/// one task, or the main thread).
public final class DataTable {
    /// The table's name, as the data source knows it.
    public let name: String
    /// The stored fields, in order.
    public let fields: [FieldDefinition]
    /// The names of ``fields``, in order: read by name for each value a rule reads, where
    /// reading `fields[i].name` would copy the whole definition.
    package let fieldNames: [String]

    let columns: [Column]
    private let fieldIndexByName: [String: Int]
    private let fieldIndexByFoldedName: [String: Int]
    /// Indexes of the primary-key fields.
    let keyFieldIndexes: [Int]

    /// The change records of rows that have any (state, pending and edit values, change id, lock).
    var changes = ChangeStore()
    /// Per slot, 0 when the row has no change record: the fast path of every read.
    var dirty: [Int32] { changes.recordIndex }
    /// The live row handle of each slot, if any. Not retained: a handle retains
    /// its table and clears its entry here when it goes away (see `DataTableRow.deinit`).
    @exclusivity(unchecked) var handles: [Unmanaged<DataTableRow>?] = []
    var hiddenCount = 0
    private var visibleSlotsCache: [Int]?
    var nextChangeId = 1
    /// Counts removals of slots, so row sets made before one can tell they are stale.
    var structureGeneration = 0
    /// The table's back reference (``back``), made on first use and ended when the table goes.
    var madeBack: BackReference<DataTable>?
    /// The keys of the rows as the last load left them, so that loading a large table in
    /// batches checks each batch's keys without collecting every earlier row's again.
    var keysOfLoadedRows: (slots: Int, generation: Int, keys: KeySet)?
    var nextTemporaryKey: Int64 = -1
    /// Rows added and then removed by the user while the table records edits: gone here, but
    /// their edits (and what their rules did meanwhile) still go to a data server.
    var vanishedChanges: [DeltaChange] = []

    var calculatedFields: [CalculatedField] = []
    var lookupFields: [LookupField] = []
    var readRecorder: ReadRecorder?
    var indexes: [Int: DataTableIndex] = [:]
    var observers: [Int: (DataTableEvent) -> Void] = [:]
    var nextObserverId = 0
    var batchDepth = 0
    var batchHasChanges = false
    /// Fields of other tables (or this one) that hold this table's key values.
    var references: [TableReference] = []
    /// The declared foreign keys of this table: `table` is the parent, `field` this table's, `keyField` the parent's.
    var parentReferences: [TableReference] = []
    /// The business rules consulted before rows change; see ``DataTableRules``.
    public var rules: (any DataTableRules)?
    /// Whether each changed row keeps the user's edits, in order, for a data server to replay
    /// (see ``RowEdit``). A `RemoteDataAdapter` turns it on for its tables; off, rows keep none.
    public var recordsEdits = false
    /// Observations this table keeps on the tables its lookup fields read.
    var lookupObservations: [DataTableObservation] = []

    /// Creates an empty table.
    ///
    /// - Throws: ``RelataError/Code/invalidDefinition`` for an empty or duplicate field name
    ///   (names differing only in case are duplicates), or a negative size, precision or scale.
    public init(name: String, fields: [FieldDefinition]) throws {
        self.name = name
        self.fields = fields
        fieldNames = fields.map(\.name)
        var byName: [String: Int] = [:]
        var byFoldedName: [String: Int] = [:]
        for (index, field) in fields.enumerated() {
            guard !field.name.isEmpty else {
                throw RelataError(.invalidDefinition, "field \(index + 1) has an empty name", table: name)
            }
            for (attribute, value) in [("size", field.size), ("precision", field.precision), ("scale", field.scale)] where value < 0 {
                throw RelataError(.invalidDefinition, "the \(attribute) is \(value); it cannot be negative", table: name, field: field.name)
            }
            guard field.precision <= 1000, field.precision == 0 || field.scale <= field.precision else {
                throw RelataError(.invalidDefinition, "precision \(field.precision) and scale \(field.scale) do not fit (precision at most 1000, scale at most the precision)",
                                  table: name, field: field.name)
            }
            let folded = field.name.lowercased()
            guard byFoldedName[folded] == nil else {
                throw RelataError(.invalidDefinition, "the field name is used twice", table: name, field: field.name)
            }
            if let defaultValue = field.defaultValue {
                do { _ = try field.type.coerced(defaultValue) } catch {
                    throw RelataError(error.code, "default value: \(error.message)", table: name, field: field.name)
                }
            }
            byName[field.name] = index
            byFoldedName[folded] = index
        }
        fieldIndexByName = byName
        fieldIndexByFoldedName = byFoldedName
        keyFieldIndexes = fields.indices.filter { fields[$0].primaryKey }
        columns = fields.map { Column(for: $0.type) }
    }

    deinit {
        madeBack?.end()
    }

    /// A way back to the table for what must not keep it alive — an observation, a lookup's link —
    /// without a weak reference (``BackReference``): nil once the table has gone.
    package var back: BackReference<DataTable> { BackReference.kept(in: &madeBack, to: self) }

    /// The number of visible rows (deleted rows and rows added in edit mode are not counted).
    public var rowCount: Int { slotCount - hiddenCount }

    /// The visible rows in table order. Deleted rows and rows added in edit mode are not included.
    public var rows: [DataTableRow] { rows(atSlots: visibleSlots) }

    /// The row at a position of ``rows``.
    ///
    /// ```swift
    /// let first = clients.row(at: 0)
    /// ```
    public func row(at index: Int) -> DataTableRow {
        precondition(index >= 0 && index < rowCount, "row index \(index) is out of range 0..<\(rowCount) of table \(name)")
        return row(atSlot: hiddenCount == 0 ? index : visibleSlots[index])
    }

    /// Rows that are deleted locally but whose deletion is not yet applied.
    public var deletedRows: [DataTableRow] {
        changes.filter { $0.value.state == .deleted }.map(\.key).sorted().map(row(atSlot:))
    }

    /// Rows with pending changes: modified, added and deleted, in the order they were first changed.
    public var changedRows: [DataTableRow] {
        changes.filter { $0.value.isPendingChange }
            .sorted { $0.value.changeId < $1.value.changeId }
            .map { row(atSlot: $0.key) }
    }

    /// The change ids of ``changedRows``, without making their row objects.
    package var changeIds: IntegerKeySet { changes.pendingChangeIds }

    /// True when any row has a pending change (or, while the table records edits, a row added
    /// and removed again has edits a data server has not seen).
    public var hasChanges: Bool { !vanishedChanges.isEmpty || changes.values.contains(where: \.isPendingChange) }

    /// The fields of the primary key.
    public var primaryKeyFields: [FieldDefinition] { keyFieldIndexes.map { fields[$0] } }

    /// The definition of a stored field, or nil.
    public func field(named name: String) -> FieldDefinition? {
        fieldIndex(named: name).map { fields[$0] }
    }

    // MARK: Slots

    var slotCount: Int { changes.slotCount }

    var visibleSlots: [Int] {
        if hiddenCount == 0 { return Array(0..<slotCount) }
        if let cached = visibleSlotsCache { return cached }
        let slots = (0..<slotCount).filter { !changes.state($0).hidesRow }
        visibleSlotsCache = slots
        return slots
    }

    func invalidateVisibleSlots() { visibleSlotsCache = nil }

    func isVisible(slot: Int) -> Bool {
        !changes.state(slot).hidesRow
    }

    /// The handle of a slot, created on first use and shared while anyone holds it.
    func row(atSlot slot: Int) -> DataTableRow {
        if let existing = handles[slot] { return existing.takeUnretainedValue() }
        let row = DataTableRow(table: self, slot: slot)
        handles[slot] = Unmanaged.passUnretained(row)
        return row
    }

    /// The handles of many slots at once (the result arrays of filters and sorts).
    func rows(atSlots slots: [Int]) -> [DataTableRow] {
        var result: [DataTableRow] = []
        result.reserveCapacity(slots.count)
        handles.withUnsafeMutableBufferPointer { handles in
            for slot in slots {
                if let existing = handles[slot] {
                    result.append(existing.takeUnretainedValue())
                } else {
                    let row = DataTableRow(table: self, slot: slot)
                    handles[slot] = Unmanaged.passUnretained(row)
                    result.append(row)
                }
            }
        }
        return result
    }

    /// Appends a slot whose originals are `values` (already coerced); returns it.
    func appendSlot(originals values: [Value]) -> Int {
        for (column, value) in zip(columns, values) { column.append(value) }
        changes.appendSlot()
        handles.append(nil)
        visibleSlotsCache?.append(slotCount - 1)   // a new slot has no record, so it is visible
        return slotCount - 1
    }

    /// Appends slots whose originals are the given columns (of the table's columns' kinds,
    /// already checked, `count` values each); returns them.
    func appendSlots(originals loaded: [Column], count: Int) -> Range<Int> {
        let first = slotCount
        reserveCapacity(first + count)
        for (column, originals) in zip(columns, loaded) { column.append(contentsOf: originals) }
        for _ in 0..<count {
            changes.appendSlot()
            handles.append(nil)
        }
        visibleSlotsCache?.append(contentsOf: first..<slotCount)   // new slots have no records, so they are visible
        return first..<slotCount
    }

    /// Makes room for `capacity` slots. Growing doubles at least, as appending does: a table
    /// loaded batch by batch, each batch reserving its own room, is not copied once per batch.
    func reserveCapacity(_ capacity: Int) {
        guard capacity > handles.capacity else { return }
        let capacity = max(capacity, handles.capacity * 2)
        for column in columns { column.reserveCapacity(capacity) }
        changes.reserveCapacity(capacity)
        handles.reserveCapacity(capacity)
    }

    /// Stores a slot's change record, keeping `dirty` and the hidden count in step.
    func setChanges(_ record: RowChanges, at slot: Int) {
        let wasHidden = changes.state(slot).hidesRow
        changes[slot] = record.isClean ? nil : record
        rowVisibilityMayHaveChanged(slot: slot, wasHidden: wasHidden)
    }

    /// Changes a slot's record in place (``ChangeStore/modify(_:_:)``), keeping the visible rows
    /// and the indexes current as ``setChanges(_:at:)`` does. `body` must not read or write the
    /// table's records.
    func modifyChanges<Result>(at slot: Int, keepingClean: Bool = false, _ body: (inout RowChanges) throws -> Result) rethrows -> Result {
        let wasHidden = changes.state(slot).hidesRow
        let result = try changes.modify(slot, keepingClean: keepingClean, body)
        rowVisibilityMayHaveChanged(slot: slot, wasHidden: wasHidden)
        return result
    }

    private func rowVisibilityMayHaveChanged(slot: Int, wasHidden: Bool) {
        let isHidden = changes.state(slot).hidesRow
        if wasHidden != isHidden {
            hiddenCount += isHidden ? 1 : -1
            invalidateVisibleSlots()
            updateIndexes(slot: slot, becameVisible: !isHidden)
        }
    }

    /// The primary keys of every row the table holds, deleted ones included — by original and
    /// by current value — so a store loading more rows leaves out those it has.
    /// (A key with a NULL part is never among them: no row holds one.)
    package var heldKeys: KeySet {
        var keys = KeySet()
        guard !keyFieldIndexes.isEmpty else { return keys }
        for slot in 0..<slotCount {
            _ = keys.insert(keyFieldIndexes.map { columns[$0].value(at: slot) })
            if changes.isDirty(slot) { _ = keys.insert(keyFieldIndexes.map { postedValue(slot: slot, field: $0) }) }
        }
        return keys
    }

    /// Forgets every row, as if none had been loaded (a server reusing a table for the next
    /// batch of a read). Row objects of the forgotten rows are detached.
    package func discardAllRows() {
        removeSlots(Array(0..<slotCount))
    }

    /// Removes slots (sorted ascending) from the table, renumbering the rest.
    func removeSlots(_ slots: [Int]) {
        guard !slots.isEmpty else { return }
        structureGeneration += 1
        for column in columns { column.remove(slots: slots) }
        let removed = Set(slots)
        var newSlot = [Int](repeating: -1, count: slotCount)
        var next = 0
        for slot in 0..<slotCount where !removed.contains(slot) {
            newSlot[slot] = next
            next += 1
        }
        for slot in slots {
            handles[slot]?.takeUnretainedValue().detach()
        }
        var newHandles: [Unmanaged<DataTableRow>?] = []
        newHandles.reserveCapacity(next)
        for slot in 0..<slotCount where newSlot[slot] >= 0 {
            handles[slot]?.takeUnretainedValue().slot = newSlot[slot]
            newHandles.append(handles[slot])
        }
        handles = newHandles
        changes.remap(newSlot, newCount: next)
        hiddenCount = changes.values.filter(\.isHidden).count
        invalidateVisibleSlots()
        for index in indexes.values { index.invalidate() }
        clearCalculatedCaches()
    }

    // MARK: Fields

    /// The index of a stored field by name (any case), or nil.
    package func fieldIndex(named name: String) -> Int? {
        // A few names are compared one by one: quicker than hashing the name (names are unique).
        if fieldNames.count <= 8, let index = fieldNames.firstIndex(of: name) { return index }
        return fieldIndexByName[name] ?? fieldIndexByFoldedName[name.lowercased()]
    }

    /// The index of a stored field, or an error that names the table and lists its fields.
    func requireFieldIndex(_ name: String) throws -> Int {
        guard let index = fieldIndex(named: name) else { throw unknownField(name) }
        return index
    }

    func unknownField(_ name: String) -> RelataError {
        let known = fields.map(\.name) + calculatedFields.map(\.name) + lookupFields.map(\.name)
        return RelataError(.unknownField, "table \(self.name) has no field '\(name)' (its fields: \(known.joined(separator: ", ")))",
                           table: self.name, field: name)
    }

    // MARK: Reading values

    /// The value the table sees for a slot: the posted current value (edit buffers excluded).
    @inline(__always) func postedValue(slot: Int, field: Int) -> Value {
        changes.postedOverride(slot, field) ?? columns[field].value(at: slot)
    }

    /// The value a row shows for a field: its edit buffer first, then its posted value.
    func currentValue(slot: Int, field: Int) -> Value {
        readRecorder?.fields.insert(field)
        if let edited = changes.editedValue(slot, field) { return edited }
        return postedValue(slot: slot, field: field)
    }

    /// The original value of a slot, nil for rows added locally.
    func originalValue(slot: Int, field: Int) -> Value? {
        let state = changes.state(slot)
        if state == .added || state == .addedInEditMode { return nil }
        return columns[field].value(at: slot)
    }

    /// Every field's original value, in order (null for each of an added row): the row's state read once.
    func originalValues(slot: Int) -> [Value] {
        let state = changes.state(slot)
        if state == .added || state == .addedInEditMode { return Array(repeating: .null, count: columns.count) }
        return columns.map { $0.value(at: slot) }
    }

    func state(ofSlot slot: Int) -> RowState {
        changes.state(slot)
    }

    /// A short description of a row for error messages: its key values, or its position.
    func rowLabel(slot: Int) -> String {
        guard !keyFieldIndexes.isEmpty else { return "row #\(slot + 1)" }
        // A row being edited (a new row before its first post, above all) is named by the key it is getting.
        var label = "row ("
        for (position, field) in keyFieldIndexes.enumerated() {
            if position > 0 { label += ", " }
            label += fields[field].name
            label += "="
            label += (changes.editedValue(slot, field) ?? postedValue(slot: slot, field: field)).text
        }
        label += ")"
        return label
    }

    func error(_ code: RelataError.Code, _ message: String, field: Int? = nil, slot: Int? = nil) -> RelataError {
        RelataError(code, message, table: name, field: field.map { fields[$0].name }, row: slot.map(rowLabel(slot:)))
    }
}

@available(*, unavailable, message: "A DataTable belongs to one isolation domain; send a Delta or the table's JSON instead.")
extension DataTable: Sendable {}

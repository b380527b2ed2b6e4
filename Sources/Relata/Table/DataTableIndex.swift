/// An index on one field of a table: rows by value, kept current as the table changes.
///
/// It is a hash map, but for an integer field whose values are unique and close together (a
/// table's integer key, mostly): there it is an array found by subtraction — no hashing — until a
/// value no longer fits (one held twice, or far from the others).
///
/// ```swift
/// let byName = try clients.index(forField: "ClientName")
/// let acme = byName.row(for: "Acme")
/// ```
public final class DataTableIndex {
    /// The indexed table.
    public unowned let table: DataTable
    /// The indexed field.
    public let field: FieldDefinition
    let fieldIndex: Int
    /// Slots by posted value; nil when it must be rebuilt.
    private var storage: IndexStorage?

    init(table: DataTable, fieldIndex: Int) {
        self.table = table
        self.fieldIndex = fieldIndex
        self.field = table.fields[fieldIndex]
    }

    /// The first row (in table order) whose value equals `value`, or nil.
    /// The value is coerced to the field's type first, so `5` finds a Float `5.0`.
    public func row(for value: Value) -> DataTableRow? {
        slots(for: value).first.map(table.row(atSlot:))
    }

    /// Every row whose value equals `value`, in table order.
    public func rows(for value: Value) -> [DataTableRow] {
        slots(for: value).map(table.row(atSlot:))
    }

    func slots(for value: Value) -> [Int] {
        guard let key = try? field.type.coerced(value), !key.isNull else { return [] }
        return slotList(for: key)?.sorted ?? []
    }

    /// The first slot, in table order, holding `key` (a value of the field's type) that `matches`;
    /// no array is made for a value one row holds.
    func firstSlot(holding key: Value, where matches: (Int) -> Bool) -> Int? {
        guard !key.isNull else { return nil }
        switch slotList(for: key) {
        case nil, .none?: return nil
        case .one(let slot)?: return matches(slot) ? slot : nil
        case .many(let slots)?: return slots.sorted().first(where: matches)
        }
    }

    /// The slots holding `key`, read in place (a copy of the storage would retain and release it).
    private func slotList(for key: Value) -> SlotList? {
        if storage == nil { storage = built() }
        return storage?.slots(for: key)
    }

    /// The index of the visible rows: dense when the field holds integers close together, one
    /// row each (a table's integer key, mostly) — found by subtraction, not hashing.
    private func built() -> IndexStorage {
        let slots = table.visibleSlots
        if field.type.storage == .integer, let dense = DenseIntegerSlots(slots: slots, value: { table.postedValue(slot: $0, field: fieldIndex) }) {
            return .dense(dense)
        }
        var built: [Value: SlotList] = [:]
        built.reserveCapacity(slots.count)
        for slot in slots {
            let value = table.postedValue(slot: slot, field: fieldIndex)
            if !value.isNull { built[value, default: .none].insert(slot) }
        }
        return .hashed(built)
    }

    func invalidate() { storage = nil }

    /// Whether the index is now an array (for tests).
    var isDense: Bool {
        if case .dense? = storage { return true }
        return false
    }

    func insert(slot: Int, value: Value) {
        guard storage != nil, !value.isNull else { return }
        storage!.insert(slot, value: value)
    }

    func remove(slot: Int, value: Value) {
        guard storage != nil, !value.isNull else { return }
        storage!.remove(slot, value: value)
    }

    func move(slot: Int, from old: Value, to new: Value) {
        remove(slot: slot, value: old)
        insert(slot: slot, value: new)
    }
}

/// What an index keeps: a hash map, or the dense array of an integer field whose values are
/// unique and close together, which becomes a hash map when a value no longer fits.
private enum IndexStorage {
    case hashed([Value: SlotList])
    case dense(DenseIntegerSlots)

    func slots(for key: Value) -> SlotList? {
        switch self {
        case .hashed(let map): return map[key]
        case .dense(let dense):
            guard case .integer(let integer) = key, let slot = dense.slot(for: integer) else { return nil }
            return .one(slot)
        }
    }

    mutating func insert(_ slot: Int, value: Value) {
        switch self {
        case .hashed(var map):
            self = .hashed([:])   // no second reference while the map changes
            map[value, default: .none].insert(slot)
            self = .hashed(map)
        case .dense(var dense):
            self = .hashed([:])
            if case .integer(let integer) = value, dense.insert(slot, for: integer) {
                self = .dense(dense)
            } else {
                var map = dense.map
                map[value, default: .none].insert(slot)
                self = .hashed(map)
            }
        }
    }

    mutating func remove(_ slot: Int, value: Value) {
        switch self {
        case .hashed(var map):
            guard var list = map[value] else { return }
            self = .hashed([:])
            list.remove(slot)
            map[value] = list.isEmpty ? nil : list
            self = .hashed(map)
        case .dense(var dense):
            guard case .integer(let integer) = value else { return }
            self = .hashed([:])
            dense.remove(slot, for: integer)
            self = .dense(dense)
        }
    }
}

/// Slots by integer value in an array: the slot of `base + i` at `i`, -1 where no row holds it.
/// Kept while every value is held by one row and the array is at most a few times the rows.
struct DenseIntegerSlots {
    private(set) var base: Int64
    private(set) var slots: [Int32]
    private(set) var count: Int

    /// The dense index of the rows at `slots`, or nil when their values are not unique
    /// integers close together.
    init?(slots rows: [Int], value: (Int) -> Value) {
        var values: [Int64?] = []
        values.reserveCapacity(rows.count)
        var low: Int64?, high = Int64.min
        for slot in rows {
            switch value(slot) {
            case .integer(let integer):
                values.append(integer)
                low = min(low ?? integer, integer)
                high = max(high, integer)
            case .null: values.append(nil)
            default: return nil
            }
        }
        base = low ?? 0
        count = 0
        slots = []
        guard let low else { return }   // no row holds a value
        guard Self.fits(low: low, high: high, rows: rows.count) else { return nil }
        slots = Array(repeating: -1, count: Int(high - low) + 1)
        for (slot, value) in zip(rows, values) {
            guard let value else { continue }
            let offset = Int(value - base)
            guard slots[offset] < 0, let slot32 = Int32(exactly: slot) else { return nil }   // a value two rows hold
            slots[offset] = slot32
            count += 1
        }
    }

    /// Whether values from `low` to `high` are close enough together for an array (at most
    /// four entries a row, and a little room for small tables).
    private static func fits(low: Int64, high: Int64, rows: Int) -> Bool {
        let (span, overflow) = high.subtractingReportingOverflow(low)
        return !overflow && span < Int64(4 * rows + 1024)
    }

    func slot(for value: Int64) -> Int? {
        let (offset, overflow) = value.subtractingReportingOverflow(base)
        guard !overflow, offset >= 0, offset < Int64(slots.count) else { return nil }
        let slot = slots[Int(offset)]
        return slot < 0 ? nil : Int(slot)
    }

    /// Adds a row's value; false when it does not fit (another row holds it, or it is too far
    /// from the others), and the index must become a hash map.
    mutating func insert(_ slot: Int, for value: Int64) -> Bool {
        guard let slot32 = Int32(exactly: slot) else { return false }
        if slots.isEmpty { base = value; slots = [-1] }
        let (offset, overflow) = value.subtractingReportingOverflow(base)
        guard !overflow else { return false }
        if offset < 0 || offset >= Int64(slots.count) {
            let low = min(base, value), high = max(base + (Int64(slots.count) - 1), value)
            guard Self.fits(low: low, high: high, rows: count + 1) else { return false }
            grow(toHold: value)
        }
        let index = Int(value - base)
        guard slots[index] < 0 || slots[index] == slot32 else { return false }
        if slots[index] < 0 { count += 1 }
        slots[index] = slot32
        return true
    }

    mutating func remove(_ slot: Int, for value: Int64) {
        guard self.slot(for: value) == slot else { return }
        slots[Int(value - base)] = -1
        count -= 1
    }

    /// Extends the array to `value`, by at least half its length on that side (as far as `Int64`
    /// goes), so that keys added one by one — new rows' falling temporary keys, rising real
    /// ones — grow it in amortized constant time.
    private mutating func grow(toHold value: Int64) {
        let room = Int64(max(slots.count / 2, 16))
        let top = base + (Int64(slots.count) - 1)
        if value < base {
            let wanted = min(value, base.subtractingReportingOverflow(room).overflow ? value : base - room)
            slots.insert(contentsOf: repeatElement(-1, count: Int(base - wanted)), at: 0)
            base = wanted
        } else {
            let wanted = max(value, top.addingReportingOverflow(room).overflow ? value : top + room)
            slots.append(contentsOf: repeatElement(-1, count: Int(wanted - top)))
        }
    }

    /// The same index as a hash map.
    var map: [Value: SlotList] {
        var map: [Value: SlotList] = [:]
        map.reserveCapacity(count + 1)
        for (offset, slot) in slots.enumerated() where slot >= 0 { map[.integer(base + Int64(offset))] = .one(Int(slot)) }
        return map
    }
}

/// One slot or several, without an array allocation for the common single case.
enum SlotList {
    case none
    case one(Int)
    case many([Int])

    var isEmpty: Bool {
        if case .none = self { return true }
        return false
    }

    var sorted: [Int] {
        switch self {
        case .none: return []
        case .one(let slot): return [slot]
        case .many(let slots): return slots.sorted()
        }
    }

    mutating func insert(_ slot: Int) {
        switch self {
        case .none: self = .one(slot)
        case .one(let existing): self = existing == slot ? self : .many([existing, slot])
        case .many(var slots):
            if !slots.contains(slot) { slots.append(slot) }
            self = .many(slots)
        }
    }

    mutating func remove(_ slot: Int) {
        switch self {
        case .none: break
        case .one(let existing): if existing == slot { self = .none }
        case .many(var slots):
            slots.removeAll { $0 == slot }
            self = slots.count == 1 ? .one(slots[0]) : slots.isEmpty ? .none : .many(slots)
        }
    }
}

extension DataTable {
    /// The hash index on a field, built on first use and kept current as rows change.
    ///
    /// ```swift
    /// let client = try clients.index(forField: "ClientId").row(for: 42)
    /// ```
    /// - Throws: ``RelataError/Code/unknownField``.
    public func index(forField name: String) throws -> DataTableIndex {
        index(forFieldAt: try requireFieldIndex(name))
    }

    /// The hash index on the field at `field` (an index into ``fields``).
    func index(forFieldAt field: Int) -> DataTableIndex {
        if let existing = indexes[field] { return existing }
        let index = DataTableIndex(table: self, fieldIndex: field)
        indexes[field] = index
        return index
    }

    /// The visible row with the given primary-key value(s), or nil.
    ///
    /// ```swift
    /// let acme = try clients.row(forPrimaryKey: 1)
    /// ```
    /// - Throws: ``RelataError/Code/invalidDefinition`` when the table has no primary key
    ///   or the number of values does not match it.
    public func row(forPrimaryKey values: Value...) throws -> DataTableRow? {
        try row(forPrimaryKey: values)
    }

    /// The visible row with the given primary-key values, or nil.
    ///
    /// ```swift
    /// let line = try orderDetails.row(forPrimaryKey: [orderId, lineNumber])
    /// ```
    public func row(forPrimaryKey values: [Value]) throws -> DataTableRow? {
        guard !keyFieldIndexes.isEmpty else {
            throw RelataError(.invalidDefinition, "the table has no primary-key field", table: name)
        }
        guard values.count == keyFieldIndexes.count else {
            throw RelataError(.invalidDefinition, "the primary key has \(keyFieldIndexes.count) fields, \(values.count) values were given", table: name)
        }
        return row(forCoercedPrimaryKey: try zip(keyFieldIndexes, values).map { try validatedKey($1, field: $0) })
    }

    /// The visible row with the given primary-key values, already of the key fields' types
    /// (``FieldDefinition/coerced(_:)``), one per key field; nil when no row holds them.
    package func row(forCoercedPrimaryKey key: [Value]) -> DataTableRow? {
        guard key.count == keyFieldIndexes.count, let first = keyFieldIndexes.first else { return nil }
        return index(forFieldAt: first).firstSlot(holding: key[0]) { slot in
            key.count == 1 || zip(keyFieldIndexes, key).allSatisfy { postedValue(slot: slot, field: $0) == $1 }
        }.map(row(atSlot:))
    }

    private func validatedKey(_ value: Value, field: Int) throws -> Value {
        do { return try fields[field].type.coerced(value) } catch {
            throw self.error(error.code, error.message, field: field)
        }
    }

    /// Adds or removes a slot from every index when it becomes visible or hidden.
    func updateIndexes(slot: Int, becameVisible: Bool) {
        for (field, index) in indexes {
            let value = postedValue(slot: slot, field: field)
            if becameVisible { index.insert(slot: slot, value: value) } else { index.remove(slot: slot, value: value) }
        }
    }
}

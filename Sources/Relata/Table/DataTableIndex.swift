/// A hash index on one field of a table: rows by value, kept current as the table changes.
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
    private var map: [Value: SlotList]?

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

    /// The slots holding `key`, read from the map in place (a copy of the map would retain and release it).
    private func slotList(for key: Value) -> SlotList? {
        if map == nil { map = builtMap() }
        return map?[key]
    }

    private func builtMap() -> [Value: SlotList] {
        let slots = table.visibleSlots
        var built: [Value: SlotList] = [:]
        built.reserveCapacity(slots.count)
        for slot in slots {
            let value = table.postedValue(slot: slot, field: fieldIndex)
            if !value.isNull { built[value, default: .none].insert(slot) }
        }
        return built
    }

    func invalidate() { map = nil }

    func insert(slot: Int, value: Value) {
        guard map != nil, !value.isNull else { return }
        map![value, default: .none].insert(slot)
    }

    func remove(slot: Int, value: Value) {
        guard map != nil, !value.isNull, var list = map![value] else { return }
        list.remove(slot)
        map![value] = list.isEmpty ? nil : list
    }

    func move(slot: Int, from old: Value, to new: Value) {
        remove(slot: slot, value: old)
        insert(slot: slot, value: new)
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

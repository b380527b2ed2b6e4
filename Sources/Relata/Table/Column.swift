import Foundation

/// One field's original values for every slot of a table, stored as a typed array
/// plus a NULL bitmap. Columns hold originals only; pending and edit values live
/// in per-row overlays (see ``RowChanges``).
protocol Column: AnyObject {
    var count: Int { get }
    func value(at slot: Int) -> Value
    /// Stores a value already coerced to the column's type.
    func set(_ value: Value, at slot: Int)
    func append(_ value: Value)
    func reserveCapacity(_ capacity: Int)
    /// Removes the given slots (sorted ascending).
    func remove(slots: [Int])
    /// Bytes held by the column's buffers.
    var byteSize: Int { get }
}

/// A Swift type a column can store unboxed.
protocol ColumnElement {
    static var zero: Self { get }
    init?(columnValue: Value)
    var columnValue: Value { get }
}

extension Int64: ColumnElement {
    static var zero: Int64 { 0 }
    init?(columnValue: Value) { guard case .integer(let v) = columnValue else { return nil }; self = v }
    var columnValue: Value { .integer(self) }
}

extension Double: ColumnElement {
    static var zero: Double { 0 }
    init?(columnValue: Value) { guard case .double(let v) = columnValue else { return nil }; self = v }
    var columnValue: Value { .double(self) }
}

extension Decimal: ColumnElement {
    static var zero: Decimal { 0 }
    init?(columnValue: Value) { guard case .decimal(let v) = columnValue else { return nil }; self = v }
    var columnValue: Value { .decimal(self) }
}

extension Bool: ColumnElement {
    static var zero: Bool { false }
    init?(columnValue: Value) { guard case .boolean(let v) = columnValue else { return nil }; self = v }
    var columnValue: Value { .boolean(self) }
}

extension String: ColumnElement {
    static var zero: String { "" }
    init?(columnValue: Value) { guard case .string(let v) = columnValue else { return nil }; self = v }
    var columnValue: Value { .string(self) }
}

extension Date: ColumnElement {
    static var zero: Date { Date(timeIntervalSince1970: 0) }
    init?(columnValue: Value) { guard case .date(let v) = columnValue else { return nil }; self = v }
    var columnValue: Value { .date(self) }
}

extension UUID: ColumnElement {
    static var zero: UUID { UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }
    init?(columnValue: Value) { guard case .guid(let v) = columnValue else { return nil }; self = v }
    var columnValue: Value { .guid(self) }
}

extension Data: ColumnElement {
    static var zero: Data { Data() }
    init?(columnValue: Value) { guard case .blob(let v) = columnValue else { return nil }; self = v }
    var columnValue: Value { .blob(self) }
}

/// A column of `Element`s with a NULL bitmap (one bit per slot).
final class TypedColumn<Element: ColumnElement>: Column {
    private(set) var elements: [Element] = []
    private var nullBits: [UInt64] = []

    /// The NULL bitmap: bit `slot % 64` of word `slot / 64` is set for NULL.
    var nullWords: [UInt64] { nullBits }

    var count: Int { elements.count }

    @inline(__always) func isNull(_ slot: Int) -> Bool {
        nullBits[slot &>> 6] & (1 &<< UInt64(slot & 63)) != 0
    }

    /// The element at a slot, or nil for NULL.
    @inline(__always) func element(at slot: Int) -> Element? {
        isNull(slot) ? nil : elements[slot]
    }

    func value(at slot: Int) -> Value {
        isNull(slot) ? .null : elements[slot].columnValue
    }

    func set(_ value: Value, at slot: Int) {
        if let element = Element(columnValue: value) {
            elements[slot] = element
            setNull(false, at: slot)
        } else {
            elements[slot] = .zero
            setNull(true, at: slot)
        }
    }

    func append(_ value: Value) {
        if elements.count & 63 == 0 { nullBits.append(0) }
        elements.append(.zero)
        set(value, at: elements.count - 1)
    }

    func reserveCapacity(_ capacity: Int) {
        elements.reserveCapacity(capacity)
        nullBits.reserveCapacity(capacity / 64 + 1)
    }

    func remove(slots: [Int]) {
        guard !slots.isEmpty else { return }
        var kept: [Element] = []
        var keptNulls: [Bool] = []
        kept.reserveCapacity(elements.count - slots.count)
        keptNulls.reserveCapacity(elements.count - slots.count)
        var removal = slots.makeIterator()
        var nextRemoved = removal.next()
        for slot in elements.indices {
            if slot == nextRemoved { nextRemoved = removal.next(); continue }
            kept.append(elements[slot])
            keptNulls.append(isNull(slot))
        }
        elements = kept
        nullBits = Array(repeating: 0, count: (kept.count + 63) / 64)
        for (slot, null) in keptNulls.enumerated() where null { setNull(true, at: slot) }
    }

    var byteSize: Int {
        let base = elements.capacity * MemoryLayout<Element>.stride + nullBits.capacity * 8
        guard Element.self == String.self else { return base }
        // Strings longer than 15 UTF-8 bytes keep their characters in a heap buffer.
        var heap = 0
        for case let string as String in elements where string.utf8.count > 15 {
            heap += 32 + (string.utf8.count + 15) / 16 * 16
        }
        return base + heap
    }

    private func setNull(_ null: Bool, at slot: Int) {
        let bit: UInt64 = 1 &<< UInt64(slot & 63)
        if null { nullBits[slot &>> 6] |= bit } else { nullBits[slot &>> 6] &= ~bit }
    }
}

/// Makes the column that stores a field of the given type.
func makeColumn(for type: DataType) -> any Column {
    switch type.storage {
    case .integer: return TypedColumn<Int64>()
    case .double: return TypedColumn<Double>()
    case .decimal: return TypedColumn<Decimal>()
    case .boolean: return TypedColumn<Bool>()
    case .string: return TypedColumn<String>()
    case .date: return TypedColumn<Date>()
    case .guid: return TypedColumn<UUID>()
    case .blob: return TypedColumn<Data>()
    }
}

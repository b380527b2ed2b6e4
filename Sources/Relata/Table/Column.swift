import Foundation

/// A Swift type a column can store unboxed.
protocol ColumnElement {
    static var zero: Self { get }
    init?(columnValue: Value)
    var columnValue: Value { get }
    /// The column's storage when it holds this type.
    static func typed(_ column: Column) -> TypedColumn<Self>?
}

extension Int64: ColumnElement {
    static var zero: Int64 { 0 }
    init?(columnValue: Value) { guard case .integer(let v) = columnValue else { return nil }; self = v }
    var columnValue: Value { .integer(self) }
    static func typed(_ column: Column) -> TypedColumn<Int64>? { if case .integer(let typed) = column { typed } else { nil } }
}

extension Double: ColumnElement {
    static var zero: Double { 0 }
    init?(columnValue: Value) { guard case .double(let v) = columnValue else { return nil }; self = v }
    var columnValue: Value { .double(self) }
    static func typed(_ column: Column) -> TypedColumn<Double>? { if case .double(let typed) = column { typed } else { nil } }
}

extension Decimal: ColumnElement {
    static var zero: Decimal { 0 }
    init?(columnValue: Value) { guard case .decimal(let v) = columnValue else { return nil }; self = v }
    var columnValue: Value { .decimal(self) }
    static func typed(_ column: Column) -> TypedColumn<Decimal>? { if case .decimal(let typed) = column { typed } else { nil } }
}

extension Bool: ColumnElement {
    static var zero: Bool { false }
    init?(columnValue: Value) { guard case .boolean(let v) = columnValue else { return nil }; self = v }
    var columnValue: Value { .boolean(self) }
    static func typed(_ column: Column) -> TypedColumn<Bool>? { if case .boolean(let typed) = column { typed } else { nil } }
}

extension String: ColumnElement {
    static var zero: String { "" }
    init?(columnValue: Value) { guard case .string(let v) = columnValue else { return nil }; self = v }
    var columnValue: Value { .string(self) }
    static func typed(_ column: Column) -> TypedColumn<String>? { if case .string(let typed) = column { typed } else { nil } }
}

extension Date: ColumnElement {
    static var zero: Date { Date(timeIntervalSince1970: 0) }
    init?(columnValue: Value) { guard case .date(let v) = columnValue else { return nil }; self = v }
    var columnValue: Value { .date(self) }
    static func typed(_ column: Column) -> TypedColumn<Date>? { if case .date(let typed) = column { typed } else { nil } }
}

extension UUID: ColumnElement {
    static var zero: UUID { UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }
    init?(columnValue: Value) { guard case .guid(let v) = columnValue else { return nil }; self = v }
    var columnValue: Value { .guid(self) }
    static func typed(_ column: Column) -> TypedColumn<UUID>? { if case .guid(let typed) = column { typed } else { nil } }
}

extension Data: ColumnElement {
    static var zero: Data { Data() }
    init?(columnValue: Value) { guard case .blob(let v) = columnValue else { return nil }; self = v }
    var columnValue: Value { .blob(self) }
    static func typed(_ column: Column) -> TypedColumn<Data>? { if case .blob(let typed) = column { typed } else { nil } }
}

/// A column of `Element`s with a NULL bitmap (one bit per slot).
final class TypedColumn<Element: ColumnElement> {
    // Unchecked: a column belongs to one table, used from one thread at a time, and no access
    // to these arrays is held across a call that could reach them again (as `handles`).
    @exclusivity(unchecked) private(set) var elements: [Element] = []
    @exclusivity(unchecked) private var nullBits: [UInt64] = []

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
        if let element = Element(columnValue: value) {
            elements.append(element)
        } else {
            elements.append(.zero)
            setNull(true, at: elements.count - 1)
        }
    }

    /// Appends a value that is not NULL.
    @inline(__always) func appendElement(_ element: Element) {
        if elements.count & 63 == 0 { nullBits.append(0) }
        elements.append(element)
    }

    /// The first NULL slot, if any.
    var firstNull: Int? {
        guard let word = nullBits.firstIndex(where: { $0 != 0 }) else { return nil }
        return (word << 6) + nullBits[word].trailingZeroBitCount
    }

    /// A column of the same NULLs, each element transformed.
    func mapped(_ transform: (Element) -> Element) -> TypedColumn<Element> {
        let column = TypedColumn<Element>()
        column.restore(elements: elements.map(transform), nullWords: nullBits)
        return column
    }

    /// Appends another column's elements and NULLs.
    func append(contentsOf other: TypedColumn<Element>) {
        let start = elements.count
        if start == 0 {
            elements = other.elements
            nullBits = other.nullBits
            return
        }
        elements.append(contentsOf: other.elements)
        let words = (elements.count + 63) / 64
        if nullBits.count < words { nullBits.append(contentsOf: repeatElement(0, count: words - nullBits.count)) }
        for (word, nulls) in other.nullBits.enumerated() where nulls != 0 {
            var bits = nulls
            while bits != 0 {
                setNull(true, at: start + (word << 6) + bits.trailingZeroBitCount)
                bits &= bits &- 1
            }
        }
    }

    func reserveCapacity(_ capacity: Int) {
        elements.reserveCapacity(capacity)
        nullBits.reserveCapacity(capacity / 64 + 1)
    }

    /// Replaces the whole column (a briefcase load): `nullWords` holds one bit per element.
    func restore(elements: [Element], nullWords: [UInt64]) {
        precondition(nullWords.count == (elements.count + 63) / 64, "the NULL bitmap does not match the elements")
        self.elements = elements
        nullBits = nullWords
        // Bits past the last element mean nothing (a damaged file or stream may set them): clear them.
        if elements.count & 63 != 0 { nullBits[nullBits.count - 1] &= (1 &<< UInt64(elements.count & 63)) &- 1 }
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

    private func setNull(_ null: Bool, at slot: Int) {
        let bit: UInt64 = 1 &<< UInt64(slot & 63)
        if null { nullBits[slot &>> 6] |= bit } else { nullBits[slot &>> 6] &= ~bit }
    }
}

/// One field's original values for every slot of a table: a typed buffer plus
/// a NULL bitmap. Columns hold originals only; pending and edit values live in
/// per-row overlays (see ``RowChanges``).
///
/// An enum rather than a protocol existential, so each operation runs the
/// column's specialized code after one switch.
enum Column {
    case integer(TypedColumn<Int64>)
    case double(TypedColumn<Double>)
    case decimal(TypedColumn<Decimal>)
    case boolean(TypedColumn<Bool>)
    case string(TypedColumn<String>)
    case date(TypedColumn<Date>)
    case guid(TypedColumn<UUID>)
    case blob(TypedColumn<Data>)

    /// The column that stores a field of the given type.
    init(for type: DataType) {
        switch type.storage {
        case .integer: self = .integer(TypedColumn())
        case .double: self = .double(TypedColumn())
        case .decimal: self = .decimal(TypedColumn())
        case .boolean: self = .boolean(TypedColumn())
        case .string: self = .string(TypedColumn())
        case .date: self = .date(TypedColumn())
        case .guid: self = .guid(TypedColumn())
        case .blob: self = .blob(TypedColumn())
        }
    }

    var count: Int {
        switch self {
        case .integer(let column): return column.count
        case .double(let column): return column.count
        case .decimal(let column): return column.count
        case .boolean(let column): return column.count
        case .string(let column): return column.count
        case .date(let column): return column.count
        case .guid(let column): return column.count
        case .blob(let column): return column.count
        }
    }

    var firstNull: Int? {
        switch self {
        case .integer(let column): return column.firstNull
        case .double(let column): return column.firstNull
        case .decimal(let column): return column.firstNull
        case .boolean(let column): return column.firstNull
        case .string(let column): return column.firstNull
        case .date(let column): return column.firstNull
        case .guid(let column): return column.firstNull
        case .blob(let column): return column.firstNull
        }
    }

    /// Appends another column of the same kind (a column of another kind is a programming error).
    func append(contentsOf other: Column) {
        switch (self, other) {
        case (.integer(let column), .integer(let other)): column.append(contentsOf: other)
        case (.double(let column), .double(let other)): column.append(contentsOf: other)
        case (.decimal(let column), .decimal(let other)): column.append(contentsOf: other)
        case (.boolean(let column), .boolean(let other)): column.append(contentsOf: other)
        case (.string(let column), .string(let other)): column.append(contentsOf: other)
        case (.date(let column), .date(let other)): column.append(contentsOf: other)
        case (.guid(let column), .guid(let other)): column.append(contentsOf: other)
        case (.blob(let column), .blob(let other)): column.append(contentsOf: other)
        default: preconditionFailure("appending a column of another kind")
        }
    }

    func value(at slot: Int) -> Value {
        switch self {
        case .integer(let column): return column.value(at: slot)
        case .double(let column): return column.value(at: slot)
        case .decimal(let column): return column.value(at: slot)
        case .boolean(let column): return column.value(at: slot)
        case .string(let column): return column.value(at: slot)
        case .date(let column): return column.value(at: slot)
        case .guid(let column): return column.value(at: slot)
        case .blob(let column): return column.value(at: slot)
        }
    }

    /// Stores a value already coerced to the column's type.
    func set(_ value: Value, at slot: Int) {
        switch self {
        case .integer(let column): column.set(value, at: slot)
        case .double(let column): column.set(value, at: slot)
        case .decimal(let column): column.set(value, at: slot)
        case .boolean(let column): column.set(value, at: slot)
        case .string(let column): column.set(value, at: slot)
        case .date(let column): column.set(value, at: slot)
        case .guid(let column): column.set(value, at: slot)
        case .blob(let column): column.set(value, at: slot)
        }
    }

    func append(_ value: Value) {
        switch self {
        case .integer(let column): column.append(value)
        case .double(let column): column.append(value)
        case .decimal(let column): column.append(value)
        case .boolean(let column): column.append(value)
        case .string(let column): column.append(value)
        case .date(let column): column.append(value)
        case .guid(let column): column.append(value)
        case .blob(let column): column.append(value)
        }
    }

    func reserveCapacity(_ capacity: Int) {
        switch self {
        case .integer(let column): column.reserveCapacity(capacity)
        case .double(let column): column.reserveCapacity(capacity)
        case .decimal(let column): column.reserveCapacity(capacity)
        case .boolean(let column): column.reserveCapacity(capacity)
        case .string(let column): column.reserveCapacity(capacity)
        case .date(let column): column.reserveCapacity(capacity)
        case .guid(let column): column.reserveCapacity(capacity)
        case .blob(let column): column.reserveCapacity(capacity)
        }
    }

    /// Removes the given slots (sorted ascending).
    func remove(slots: [Int]) {
        switch self {
        case .integer(let column): column.remove(slots: slots)
        case .double(let column): column.remove(slots: slots)
        case .decimal(let column): column.remove(slots: slots)
        case .boolean(let column): column.remove(slots: slots)
        case .string(let column): column.remove(slots: slots)
        case .date(let column): column.remove(slots: slots)
        case .guid(let column): column.remove(slots: slots)
        case .blob(let column): column.remove(slots: slots)
        }
    }
}

extension DataTable {
    /// Reads a field's posted values by slot for a scan that leaves the table unchanged (a query):
    /// the typed column's elements straight from a snapshot of its storage, and the row's changes
    /// for a slot that has some — what ``postedValue(slot:field:)`` gives, without going through
    /// the column for every row.
    func postedValueReader(field: Int) -> (Int) -> Value {
        let dirty = self.dirty
        let posted = { [unowned self] (slot: Int) in self.postedValue(slot: slot, field: field) }
        func reader<Element>(_ column: TypedColumn<Element>) -> (Int) -> Value {
            let elements = column.elements, nulls = column.nullWords
            return { slot in
                if dirty[slot] != 0 { return posted(slot) }
                return nulls[slot &>> 6] & (1 &<< UInt64(slot & 63)) != 0 ? .null : elements[slot].columnValue
            }
        }
        switch columns[field] {
        case .integer(let column): return reader(column)
        case .double(let column): return reader(column)
        case .decimal(let column): return reader(column)
        case .boolean(let column): return reader(column)
        case .string(let column): return reader(column)
        case .date(let column): return reader(column)
        case .guid(let column): return reader(column)
        case .blob(let column): return reader(column)
        }
    }
}

extension DataTable {
    /// Fills a new, empty table with rows whose values already have its fields' types (a DA SQL
    /// answer: no key, nothing required), column by column, without ``loadRows(_:)``'s checks.
    /// Returns false, leaving the table empty, when a value is not of its field's type.
    func fill(withTypedRows rows: [[Value]]) -> Bool {
        precondition(slotCount == 0, "filling a table that has rows")
        /// The column's elements and NULL bitmap, ready to store; nil when a value does not fit.
        func filled<Element>(_ column: TypedColumn<Element>, field: Int) -> (() -> Void)? {
            var elements: [Element] = []
            elements.reserveCapacity(rows.count)
            var nulls = [UInt64](repeating: 0, count: (rows.count + 63) / 64)
            for (index, row) in rows.enumerated() {
                if let element = Element(columnValue: row[field]) {
                    elements.append(element)
                } else {
                    guard row[field].isNull else { return nil }
                    elements.append(.zero)
                    nulls[index &>> 6] |= 1 &<< UInt64(index & 63)
                }
            }
            return { column.restore(elements: elements, nullWords: nulls) }
        }
        var stores: [() -> Void] = []
        for (field, column) in columns.enumerated() {
            let store: (() -> Void)?
            switch column {
            case .integer(let typed): store = filled(typed, field: field)
            case .double(let typed): store = filled(typed, field: field)
            case .decimal(let typed): store = filled(typed, field: field)
            case .boolean(let typed): store = filled(typed, field: field)
            case .string(let typed): store = filled(typed, field: field)
            case .date(let typed): store = filled(typed, field: field)
            case .guid(let typed): store = filled(typed, field: field)
            case .blob(let typed): store = filled(typed, field: field)
            }
            guard let store else { return false }
            stores.append(store)
        }
        for store in stores { store() }
        changes.restoreEmptySlots(rows.count)
        handles = Array(repeating: nil, count: rows.count)
        invalidateVisibleSlots()
        return true
    }
}

/// Values by field name: a change's old, new or refreshed values, or an edit's.
///
/// It reads and writes like a dictionary of `String` to ``Value`` — a subscript by name, a
/// literal, `count`, `keys`, iteration as `(key, value)` pairs — but keeps its names in order
/// (the order they were first set, a name removed and set again back in its place; a table's
/// field order for the values the table makes) and shares
/// that list of names with every value set made alike: the changes of one delta store only
/// their values, and are compared, encoded and read by position.
///
/// ```swift
/// var values: FieldValues = ["ClientId": 7, "ClientName": "Acme"]
/// values["ClientName"] = "Acme Ltd"
/// values["Discount"] = 0.1          // a name it did not hold goes last
/// values.keys                       // ["ClientId", "ClientName", "Discount"]
/// values["Nope"]                    // nil
/// ```
public struct FieldValues: Sendable {
    /// The names values may be held for; `slots` has one entry for each.
    package private(set) var names: FieldNames
    /// Each name's value, nil where this set holds none.
    private var slots: [Value?]
    /// The number of values held (slots that are not nil).
    public private(set) var count: Int

    /// No values.
    public init() {
        names = .none
        slots = []
        count = 0
    }

    /// The values of a dictionary, in its order.
    ///
    /// ```swift
    /// let values = FieldValues(["Status": "open"])
    /// ```
    public init(_ dictionary: [String: Value]) {
        self.init()
        guard !dictionary.isEmpty else { return }
        names = FieldNames(unique: Array(dictionary.keys))
        slots = Array(dictionary.values)
        count = slots.count
    }

    /// Values from names and values; of a name given twice, the last value counts.
    ///
    /// ```swift
    /// let values = FieldValues(uniqueKeysWithValues: zip(["A", "B"], [Value.integer(1), .null]))
    /// ```
    public init(uniqueKeysWithValues pairs: some Sequence<(String, Value)>) {
        self.init()
        for (name, value) in pairs { self[name] = value }
    }

    /// Values for `names`, one slot each (nil: no value).
    package init(names: FieldNames, slots: [Value?]) {
        precondition(slots.count == names.names.count, "one slot per name")
        self.names = names
        self.slots = slots
        count = slots.reduce(0) { $1 == nil ? $0 : $0 + 1 }
    }

    /// A value for every one of `names`: `value(position)`.
    package init(names: FieldNames, _ value: (Int) -> Value) {
        let count = names.names.count
        self.names = names
        slots = [Value?](unsafeUninitializedCapacity: count) { buffer, initialized in
            for position in 0..<count { (buffer.baseAddress! + position).initialize(to: value(position)) }
            initialized = count
        }
        self.count = count
    }

    /// True when no value is held.
    public var isEmpty: Bool { count == 0 }

    /// The value of a field by name; nil when none is held. Setting nil removes the value;
    /// setting a name never held adds it after the others.
    public subscript(name: String) -> Value? {
        get {
            guard count > 0, let position = names.position(of: name) else { return nil }
            return slots[position]
        }
        set {
            if let position = names.position(of: name) {
                let had = slots[position] != nil
                slots[position] = newValue
                count += (newValue == nil ? 0 : 1) - (had ? 1 : 0)
            } else if let newValue {
                names = names.adding(name)
                slots.append(newValue)
                count += 1
            }
        }
    }

    /// The value at `position` of ``names``; nil when none is held.
    package func value(at position: Int) -> Value? { slots[position] }

    /// The names that have a value, in order.
    public var keys: [String] { map(\.key) }

    /// The values held, in their names' order.
    public var values: [Value] { map(\.value) }

    /// The values as a dictionary.
    public var dictionary: [String: Value] {
        var dictionary = [String: Value](minimumCapacity: count)
        for (name, value) in self { dictionary[name] = value }
        return dictionary
    }

    /// Removes a name's value, and returns it (nil when none was held).
    @discardableResult
    public mutating func removeValue(forKey name: String) -> Value? {
        let old = self[name]
        self[name] = nil
        return old
    }

    /// Sets each of `other`'s values; where both hold a name, `combine(mine, theirs)` decides.
    ///
    /// ```swift
    /// values.merge(["Total": 12]) { _, new in new }
    /// ```
    public mutating func merge(_ other: FieldValues, uniquingKeysWith combine: (Value, Value) throws -> Value) rethrows {
        for (name, value) in other {
            self[name] = try self[name].map { try combine($0, value) } ?? value
        }
    }

    /// The values `isIncluded` keeps, in the same order.
    ///
    /// ```swift
    /// let set = values.filter { !$0.value.isNull }
    /// ```
    public func filter(_ isIncluded: (Element) throws -> Bool) rethrows -> FieldValues {
        var kept = self
        for element in self where try !isIncluded(element) { kept[element.key] = nil }
        return kept
    }

    /// The same names with `transform`'s values.
    public func mapValues(_ transform: (Value) throws -> Value) rethrows -> FieldValues {
        var mapped = self
        for position in slots.indices {
            if let value = slots[position] { mapped.slots[position] = try transform(value) }
        }
        return mapped
    }

    /// Whether `self` and `other` hold one list of names and their slots in one storage: one
    /// a copy of the other, neither changed since.
    package func isSameStorage(as other: FieldValues) -> Bool {
        names === other.names && slots.withUnsafeBufferPointer { mine in
            other.slots.withUnsafeBufferPointer { $0.baseAddress == mine.baseAddress }
        }
    }

    /// Whether `other` holds a value for the same names as `self`, each `same` as its own,
    /// read by position when both share their names.
    package func allValues(matching other: FieldValues, _ same: (Value, Value) -> Bool, sameName: (String, String) -> Bool) -> Bool {
        guard count == other.count else { return false }
        if names === other.names {
            for position in slots.indices {
                switch (slots[position], other.slots[position]) {
                case (nil, nil): continue
                case let (mine?, theirs?) where same(mine, theirs): continue
                default: return false
                }
            }
            return true
        }
        for (name, value) in self {
            guard let position = other.names.position(of: name), sameName(other.names.names[position], name),
                  let theirs = other.slots[position], same(value, theirs) else { return false }
        }
        return true
    }
}

extension FieldValues: Collection {
    /// A name and its value.
    public typealias Element = (key: String, value: Value)

    /// A position among the values held.
    public struct Index: Comparable, Sendable {
        fileprivate let slot: Int

        public static func < (lhs: Index, rhs: Index) -> Bool { lhs.slot < rhs.slot }
    }

    public var startIndex: Index { Index(slot: firstHeld(from: 0)) }

    public var endIndex: Index { Index(slot: slots.count) }

    public func index(after index: Index) -> Index { Index(slot: firstHeld(from: index.slot + 1)) }

    public subscript(position: Index) -> Element {
        guard let value = slots[position.slot] else { preconditionFailure("a FieldValues index of another set of values") }
        return (names.names[position.slot], value)
    }

    /// The first slot at or after `slot` that holds a value, or the end.
    private func firstHeld(from slot: Int) -> Int {
        var slot = slot
        while slot < slots.count, slots[slot] == nil { slot += 1 }
        return slot
    }

    /// Walks the values held, in their names' order.
    public struct Iterator: IteratorProtocol {
        private let values: FieldValues
        private var position = 0

        fileprivate init(_ values: FieldValues) { self.values = values }

        public mutating func next() -> Element? {
            while position < values.slots.count {
                defer { position += 1 }
                if let value = values.slots[position] { return (values.names.names[position], value) }
            }
            return nil
        }
    }

    public func makeIterator() -> Iterator { Iterator(self) }

    public var underestimatedCount: Int { count }
}

extension FieldValues: ExpressibleByDictionaryLiteral {
    /// Values from a literal; of a name given twice, the last value counts.
    public init(dictionaryLiteral elements: (String, Value)...) {
        self.init()
        for (name, value) in elements { self[name] = value }
    }
}

extension FieldValues: Hashable {
    /// The same names with equal values (``Value``'s `==`), whatever their order.
    public static func == (lhs: FieldValues, rhs: FieldValues) -> Bool {
        if lhs.isSameStorage(as: rhs) { return true }
        return lhs.allValues(matching: rhs, ==, sameName: { _, _ in true })
    }

    public func hash(into hasher: inout Hasher) {
        // Order-free, as equality is: each pair hashed alone, the hashes summed.
        var sum = 0
        for (name, value) in self {
            var pair = Hasher()
            pair.combine(name)
            pair.combine(value)
            sum &+= pair.finalize()
        }
        hasher.combine(count)
        hasher.combine(sum)
    }
}

extension FieldValues: Codable {
    private struct Name: CodingKey {
        let stringValue: String
        init(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    /// Encodes an object of the values by name, in order (as a `[String: Value]` would be, unordered).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Name.self)
        for (name, value) in self { try container.encode(value, forKey: Name(stringValue: name)) }
    }

    public init(from decoder: any Decoder) throws {
        self.init(try [String: Value](from: decoder))
    }
}

extension FieldValues: CustomStringConvertible, CustomDebugStringConvertible {
    /// The values as a dictionary literal, in order: `["ClientId": 7, "ClientName": "Acme"]`.
    public var description: String {
        isEmpty ? "[:]" : "[" + map { "\(String(reflecting: $0.key)): \(String(reflecting: $0.value))" }.joined(separator: ", ") + "]"
    }

    public var debugDescription: String { description }
}

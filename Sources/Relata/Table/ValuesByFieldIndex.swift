/// Values by field index, for the few fields a row changes. The first two
/// entries live inline (most changed rows change one or two fields), so
/// reading and copying them needs no heap allocation and no reference counting.
struct ValuesByFieldIndex: ExpressibleByDictionaryLiteral, Sequence {
    private var first: (key: Int, value: Value)?
    private var second: (key: Int, value: Value)?
    private var more: [(key: Int, value: Value)] = []

    init(dictionaryLiteral elements: (Int, Value)...) {
        for (key, value) in elements { self[key] = value }
    }

    init(_ values: [Int: Value]) {
        for key in values.keys.sorted() { self[key] = values[key] }
    }

    @inline(__always) var isEmpty: Bool { first == nil }
    var keys: [Int] { map(\.key) }

    subscript(key: Int) -> Value? {
        get {
            if let first, first.key == key { return first.value }
            if let second, second.key == key { return second.value }
            for entry in more where entry.key == key { return entry.value }
            return nil
        }
        set {
            if let newValue { set(key, newValue) } else { remove(key) }
        }
    }

    private mutating func set(_ key: Int, _ value: Value) {
        if first == nil || first!.key == key { first = (key, value); return }
        if second == nil || second!.key == key { second = (key, value); return }
        if let index = more.firstIndex(where: { $0.key == key }) { more[index].value = value } else { more.append((key, value)) }
    }

    private mutating func remove(_ key: Int) {
        var entries = Array(self)
        entries.removeAll { $0.key == key }
        self = [:]
        for entry in entries { set(entry.key, entry.value) }
    }

    mutating func merge(_ other: ValuesByFieldIndex, uniquingKeysWith combine: (Value, Value) -> Value) {
        for (key, value) in other { self[key] = self[key].map { combine($0, value) } ?? value }
    }

    /// Calls `body` with each entry, without building an iterator.
    @inline(__always) func forEach(_ body: (Int, Value) -> Void) {
        guard let first else { return }
        body(first.key, first.value)
        guard let second else { return }
        body(second.key, second.value)
        for entry in more { body(entry.key, entry.value) }
    }

    /// Calls `body` with each entry in the order of the keys, allocating nothing when there
    /// are at most two (as in most edits).
    func forEachInKeyOrder(_ body: (Int, Value) throws -> Void) rethrows {
        guard let first else { return }
        guard let second else { return try body(first.key, first.value) }
        guard more.isEmpty else {
            for entry in Array(self).sorted(by: { $0.key < $1.key }) { try body(entry.key, entry.value) }
            return
        }
        let (low, high) = first.key < second.key ? (first, second) : (second, first)
        try body(low.key, low.value)
        try body(high.key, high.value)
    }

    func makeIterator() -> IndexingIterator<[(key: Int, value: Value)]> {
        var entries: [(key: Int, value: Value)] = []
        forEach { entries.append(($0, $1)) }
        return entries.makeIterator()
    }
}

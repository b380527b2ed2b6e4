/// Values by field index, for the few fields a row changes: a small array
/// searched linearly, which beats hashing for the handful of entries a row has.
struct FieldValues: ExpressibleByDictionaryLiteral, Sequence {
    private var entries: [(key: Int, value: Value)] = []

    init(dictionaryLiteral elements: (Int, Value)...) {
        for (key, value) in elements { self[key] = value }
    }

    init(_ values: [Int: Value]) {
        for key in values.keys.sorted() { self[key] = values[key] }
    }

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }
    var keys: [Int] { entries.map(\.key) }

    subscript(key: Int) -> Value? {
        get {
            for entry in entries where entry.key == key { return entry.value }
            return nil
        }
        set {
            if let index = entries.firstIndex(where: { $0.key == key }) {
                if let newValue { entries[index].value = newValue } else { entries.remove(at: index) }
            } else if let newValue {
                entries.append((key, newValue))
            }
        }
    }

    mutating func merge(_ other: FieldValues, uniquingKeysWith combine: (Value, Value) -> Value) {
        for (key, value) in other { self[key] = self[key].map { combine($0, value) } ?? value }
    }

    func makeIterator() -> IndexingIterator<[(key: Int, value: Value)]> { entries.makeIterator() }
}

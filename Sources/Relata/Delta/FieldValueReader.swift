/// Reads the values of a fixed list of field names out of changes' values (`[String: Value]`),
/// hashing no name while the dictionaries keep the order of the one before — as a delta's do:
/// ``DataTable/makeDelta()`` copies each change's values from one template, the binary reader
/// lays each change's out like the last, and a dictionary's copy keeps its order. Dictionaries
/// in other orders are read by name, as a lookup would.
///
/// ```swift
/// var reader = FieldValueReader(names: ["ClientId", "ClientName"])
/// for index in delta.changes.indices {
///     reader.load(delta.changes[index].oldValues)
///     let id = reader[0]   // the change's ClientId, or nil when it has none
/// }
/// ```
package struct FieldValueReader {
    /// The names read, in the order ``subscript(_:)`` gives their values.
    package let names: [String]
    /// Where each name is in ``names``.
    private let positions: [String: Int]
    /// The values of the dictionary loaded last, by position in ``names``.
    private var loaded: [Value?]
    /// The last dictionary's names in its own order, and where each is in ``names`` (-1: not read).
    private var layout: [String] = []
    private var places: [Int] = []
    /// Dictionaries in a row whose order was another; past a few, orders are not learnt.
    private var misses = 0

    /// A reader of `names` (each once).
    package init(names: [String]) {
        self.names = names
        positions = Dictionary(names.enumerated().map { ($1, $0) }) { first, _ in first }
        loaded = Array(repeating: nil, count: names.count)
    }

    /// The value of the name at `position` in ``names`` in the dictionary loaded last; nil when it has none.
    package subscript(position: Int) -> Value? { loaded[position] }

    /// Reads the values of ``names`` out of `values`.
    package mutating func load(_ values: [String: Value]) {
        for position in loaded.indices { loaded[position] = nil }
        if values.count == layout.count, readInLayout(values) {
            misses = 0
            return
        }
        guard misses < 4 else {
            for (position, name) in names.enumerated() { loaded[position] = values[name] }
            return
        }
        misses += 1
        layout = Array(values.keys)
        places = layout.map { positions[$0] ?? -1 }
        _ = readInLayout(values)
    }

    /// Reads `values` in their own order, which must be the layout's; false (with `loaded`
    /// cleared) when it is not.
    private mutating func readInLayout(_ values: [String: Value]) -> Bool {
        var index = 0
        for (name, value) in values {
            guard name == layout[index] else {
                for position in loaded.indices { loaded[position] = nil }
                return false
            }
            if places[index] >= 0 { loaded[places[index]] = value }
            index += 1
        }
        return true
    }
}

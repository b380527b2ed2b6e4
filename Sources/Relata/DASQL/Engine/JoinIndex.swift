/// The right side of a hash join: each key's rows as a chain through two flat arrays (no
/// array per key), integer keys — the usual join columns — in a dictionary of their own.
struct JoinIndex {
    private var integers: [Int64: Int] = [:]
    private var others: [Value: Int] = [:]
    /// `slots[i]` is a row of the table; `next[i]` the position of the next row with its key, or -1.
    private var slots: [Int] = []
    private var next: [Int] = []

    /// Adds a row under a key; rows of one key come out in the opposite order they went in.
    mutating func insert(_ key: Value, slot: Int) {
        let position = slots.count
        slots.append(slot)
        if case .integer(let integer) = key {
            next.append(integers.updateValue(position, forKey: integer) ?? -1)
        } else {
            next.append(others.updateValue(position, forKey: key) ?? -1)
        }
    }

    /// Calls `body` with each row inserted under `key`.
    func forEachMatch(of key: Value, _ body: (Int) -> Void) {
        var position: Int
        if case .integer(let integer) = key { position = integers[integer] ?? -1 } else { position = others[key] ?? -1 }
        while position >= 0 {
            body(slots[position])
            position = next[position]
        }
    }
}

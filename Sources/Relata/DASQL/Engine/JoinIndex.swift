/// The right side of a hash join: each key's rows as a chain through two flat arrays (no
/// array per key); integer keys — the usual join columns — in an open-addressing table of
/// their own, with a multiplicative hash: a probe costs a few nanoseconds instead of a
/// `Hasher`'s tens, and the multiplier is random per index, so no one can choose keys that
/// collide.
struct JoinIndex {
    private var integers: IntegerHeads
    private var others: [Value: Int] = [:]
    /// `slots[i]` is a row of the table; `next[i]` the position of the next row with its key, or -1.
    private var slots: [Int] = []
    private var next: [Int] = []

    /// An index for about `capacity` rows.
    init(capacity: Int) {
        integers = IntegerHeads(capacity: capacity)
        slots.reserveCapacity(capacity)
        next.reserveCapacity(capacity)
    }

    /// Adds a row under a key; rows of one key come out in the opposite order they went in.
    mutating func insert(_ key: Value, slot: Int) {
        let position = slots.count
        slots.append(slot)
        if case .integer(let integer) = key {
            next.append(integers.updateHead(position, forKey: integer))
        } else {
            next.append(others.updateValue(position, forKey: key) ?? -1)
        }
    }

    /// Calls `body` with each row inserted under `key`.
    func forEachMatch(of key: Value, _ body: (Int) -> Void) {
        var position: Int
        if case .integer(let integer) = key { position = integers.head(forKey: integer) } else { position = others[key] ?? -1 }
        while position >= 0 {
            body(slots[position])
            position = next[position]
        }
    }
}

/// Integer keys to the first position of their chain (-1: none), by linear probing in a
/// table at most half full.
struct IntegerHeads {
    private var keys: [Int64]
    private var heads: [Int]
    private let mask: Int
    private let multiplier: UInt64
    private var count = 0

    init(capacity: Int) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        keys = Array(repeating: 0, count: size)
        heads = Array(repeating: -1, count: size)
        mask = size - 1
        multiplier = UInt64.random(in: 1...UInt64.max) | 1
    }

    @inline(__always) private func start(_ key: Int64) -> Int {
        Int(truncatingIfNeeded: (UInt64(bitPattern: key) &* multiplier) >> 32) & mask
    }

    /// Makes `head` the key's first position; returns the one before (-1: none).
    mutating func updateHead(_ head: Int, forKey key: Int64) -> Int {
        if (count + 1) * 2 > keys.count { grow() }
        var index = start(key)
        while heads[index] >= 0 {
            if keys[index] == key {
                defer { heads[index] = head }
                return heads[index]
            }
            index = (index + 1) & mask
        }
        keys[index] = key
        heads[index] = head
        count += 1
        return -1
    }

    /// The key's first position, or -1.
    func head(forKey key: Int64) -> Int {
        var index = start(key)
        while heads[index] >= 0 {
            if keys[index] == key { return heads[index] }
            index = (index + 1) & mask
        }
        return -1
    }

    private mutating func grow() {
        var larger = IntegerHeads(capacity: keys.count)
        for index in keys.indices where heads[index] >= 0 { _ = larger.updateHead(heads[index], forKey: keys[index]) }
        self = larger
    }
}

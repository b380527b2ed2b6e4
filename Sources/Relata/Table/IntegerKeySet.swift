/// A set of integer keys that costs a bit per key while the keys are dense — the usual
/// 1…n of an auto-increment key, loaded in any order — and becomes a hash set once they
/// are not. A table keeps the keys of the rows it loaded (so loading more rows in batches
/// checks each batch against the earlier ones): as a `Set<Int64>` that was about 17 bytes a
/// row, as much as half the row's own values.
///
/// ```swift
/// var keys = IntegerKeySet()
/// keys.insert(3)    // true
/// keys.insert(3)    // false: there already
/// keys.contains(4)  // false
/// ```
package struct IntegerKeySet: Sendable {
    /// Bit `i` of word `w` stands for `base + 64 * w + i`; `base` is a multiple of 64.
    private var base: Int64 = 0
    private var words: [UInt64] = []
    /// The keys, once they are too sparse for the bitmap.
    private var hashed: Set<Int64>?
    package private(set) var count = 0

    /// Adds a key; false when it was there already.
    @discardableResult package mutating func insert(_ key: Int64) -> Bool {
        if hashed != nil { return insertHashed(key) }
        guard let position = position(of: key) ?? grown(toHold: key) else { return insertHashed(key) }
        let bit: UInt64 = 1 &<< UInt64(position & 63)
        if words[position >> 6] & bit != 0 { return false }
        words[position >> 6] |= bit
        count += 1
        return true
    }

    package func contains(_ key: Int64) -> Bool {
        if let hashed { return hashed.contains(key) }
        guard let position = position(of: key) else { return false }
        return words[position >> 6] & (1 &<< UInt64(position & 63)) != 0
    }

    /// The set of some integers (change ids, say): when they are dense, one bitmap sized at once.
    package init(_ keys: some Collection<Int>) {
        var range: (low: Int, high: Int)?
        for key in keys { range = range.map { (Swift.min($0.low, key), Swift.max($0.high, key)) } ?? (key, key) }
        guard let range else { return }
        let low = Int64(range.low) & ~63
        let (span, overflow) = Int64(range.high).subtractingReportingOverflow(low)
        guard !overflow, Self.bitmapFits(words: Int(span / 64) + 1, keys: keys.count) else {
            for key in keys { _ = insert(Int64(key)) }
            return
        }
        base = low
        var words = [UInt64](repeating: 0, count: Int(span / 64) + 1)
        var count = 0
        words.withUnsafeMutableBufferPointer { words in
            for key in keys {
                let offset = Int(Int64(key) - low), bit: UInt64 = 1 &<< UInt64(offset & 63)
                if words[offset >> 6] & bit == 0 { count += 1 }
                words[offset >> 6] |= bit
            }
        }
        self.words = words
        self.count = count
    }

    package init() {}

    /// Makes room for `more` keys in the hash set, once there is one (the bitmap grows by doubling).
    mutating func reserveCapacity(_ more: Int) {
        hashed?.reserveCapacity(count + more)
    }

    /// The key's bit position in the bitmap, or nil when the bitmap does not reach it.
    private func position(of key: Int64) -> Int? {
        guard !words.isEmpty else { return nil }
        let (offset, overflow) = key.subtractingReportingOverflow(base)
        guard !overflow, offset >= 0, offset < Int64(words.count) * 64 else { return nil }
        return Int(offset)
    }

    /// Grows the bitmap to reach `key` (doubling, so keys that arrive one after another cost
    /// little), and returns the key's position; nil when the keys would be too sparse for it.
    private mutating func grown(toHold key: Int64) -> Int? {
        let keyWord = key & ~63
        guard !words.isEmpty else {
            base = keyWord
            words = [UInt64](repeating: 0, count: 16)
            return position(of: key)
        }
        // The words below the current base and above its end that the key needs, doubled.
        let end = base.addingReportingOverflow(Int64(words.count) * 64)
        guard !end.overflow else { return nil }
        var below = 0, above = 0
        if key < base {
            let (gap, overflow) = base.subtractingReportingOverflow(keyWord)
            guard !overflow, gap / 64 <= Int64(Int.max / 2) else { return nil }
            below = max(Int(gap / 64), words.count)
        } else {
            let (gap, overflow) = keyWord.subtractingReportingOverflow(end.partialValue)
            guard !overflow, gap / 64 <= Int64(Int.max / 2) else { return nil }
            above = max(Int(gap / 64) + 1, words.count)
        }
        let total = words.count + below + above
        guard Self.bitmapFits(words: total, keys: count + 1) else { return nil }
        let (newBase, overflow) = base.subtractingReportingOverflow(Int64(below) * 64)
        guard !overflow else { return nil }
        var grown = [UInt64](repeating: 0, count: total)
        grown.replaceSubrange(below..<(below + words.count), with: words)
        words = grown
        base = newBase
        return position(of: key)
    }

    /// Whether keys are dense enough for a bitmap of `words`: at most about two bytes of bitmap a
    /// key (a hash set takes eight or more).
    private static func bitmapFits(words: Int, keys: Int) -> Bool { words <= keys / 4 + 1024 }

    /// Moves the keys to a hash set (once) and adds `key` there.
    private mutating func insertHashed(_ key: Int64) -> Bool {
        if hashed == nil {
            var keys = Set<Int64>(minimumCapacity: count + 1)
            for (index, word) in words.enumerated() where word != 0 {
                var bits = word
                while bits != 0 {
                    keys.insert(base + Int64(index) * 64 + Int64(bits.trailingZeroBitCount))
                    bits &= bits - 1
                }
            }
            words = []
            hashed = keys
        }
        let inserted = hashed!.insert(key).inserted
        if inserted { count += 1 }
        return inserted
    }
}

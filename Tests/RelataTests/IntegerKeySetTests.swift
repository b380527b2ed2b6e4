import Testing
@testable import Relata

/// The keys a table remembers while rows load, checked against a plain `Set<Int64>` on the
/// orders and spreads a careless bitmap gets wrong.
@Suite struct IntegerKeySetTests {
    /// Inserts every key into both sets and expects the same answers and count.
    func expectSameAnswers(_ keys: [Int64], sourceLocation: SourceLocation = #_sourceLocation) {
        var set = IntegerKeySet()
        var reference = Set<Int64>()
        for key in keys {
            let inserted = set.insert(key)
            #expect(inserted == reference.insert(key).inserted, "key \(key)", sourceLocation: sourceLocation)
        }
        #expect(set.count == reference.count, sourceLocation: sourceLocation)
        // Membership agrees for every key and its neighbours, before and after the bitmap's ends.
        for key in reference.union(keys.flatMap { [$0 &- 1, $0 &+ 1, $0 &- 64, $0 &+ 64] }) {
            #expect(set.contains(key) == reference.contains(key), "contains \(key)", sourceLocation: sourceLocation)
        }
        for key in reference { #expect(set.insert(key) == false, "key \(key) is held", sourceLocation: sourceLocation) }

        // The same keys given at once (one bitmap sized for them, or a hash set), then more added.
        var built = IntegerKeySet(keys.map { Int($0) })
        #expect(built.count == reference.count, sourceLocation: sourceLocation)
        for key in reference.union(keys.flatMap { [$0 &- 1, $0 &+ 1, $0 &- 64, $0 &+ 64] }) {
            #expect(built.contains(key) == reference.contains(key), "contains \(key) given at once", sourceLocation: sourceLocation)
        }
        for key in reference { #expect(built.insert(key) == false, "key \(key) is held", sourceLocation: sourceLocation) }
        for key in keys.flatMap({ [$0 &- 65, $0 &+ 65] }) {
            #expect(built.insert(key) == reference.insert(key).inserted, "key \(key) added after", sourceLocation: sourceLocation)
        }
        #expect(built.count == reference.count, sourceLocation: sourceLocation)
    }

    @Test func noKeysGivenAtOnce() {
        var empty = IntegerKeySet([Int]())
        #expect(empty.count == 0 && !empty.contains(0))
        #expect(empty.insert(5) && empty.contains(5) && empty.count == 1)
    }

    @Test func denseKeysInAnyOrder() {
        expectSameAnswers(Array(1...10_000))
        expectSameAnswers(Array((1...10_000).reversed()))
        var generator = SystemRandomNumberGenerator()
        expectSameAnswers(Array(-5_000...5_000).shuffled(using: &generator) + [0, 1, -1, 5_000])
    }

    @Test func sparseKeysMoveToAHashSetAndKeepTheOnesBefore() {
        expectSameAnswers(Array(1...500) + [1 << 40, 7, 1 << 40, 1 << 41, 499, -(1 << 50)])
        expectSameAnswers((0..<2_000).map { Int64($0) * 1_000_003 } + [0, 1_000_003])
    }

    @Test func keysAtTheEndsOfTheRange() {
        expectSameAnswers([.max, .max - 1, .min, .min + 1, 0, .max, .min])
        expectSameAnswers([.min, .min + 63, .min + 64, .min])
        expectSameAnswers([.max, .max - 63, .max - 64, .max - 200, .max])
        expectSameAnswers([0, .max, -1, .min])
    }

    @Test func aTableLoadedInBatchesStillRefusesAKeyItHas() throws {
        let table = try DataTable(name: "Items", fields: [FieldDefinition("Id", .largeInt, primaryKey: true), FieldDefinition("Name", .string)])
        try table.loadRows((1...5_000).map { [.integer(Int64($0)), .string("item \($0)")] })
        try table.loadRows((5_001...10_000).reversed().map { [.integer(Int64($0)), .string("item \($0)")] })
        #expect(throws: RelataError.self) { try table.loadRows([[.integer(7_777), .string("again")]]) }
        #expect(throws: RelataError.self) { try table.loadRows([[.integer(1), .string("again")]]) }
        try table.loadRows([[.integer(1 << 40), .string("far away")]])
        #expect(throws: RelataError.self) { try table.loadRows([[.integer(3), .string("again")]]) }
        #expect(table.rowCount == 10_001)
    }
}

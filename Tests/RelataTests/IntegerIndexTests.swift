import Testing
@testable import Relata
import RelataTestSupport

/// An index on an integer field is kept as an array while its values are unique and close
/// together, and as a hash map otherwise. Checked against a scan of the rows, through the
/// edits that move it from one to the other: falling temporary keys, values far away, a value
/// two rows hold, rows removed and changes cancelled, the ends of `Int64`.
@Suite struct IntegerIndexTests {
    /// A table of `count` rows with keys `first, first + step, …` and a non-key integer `N`.
    private func table(count: Int, first: Int64 = 1, step: Int64 = 1) throws -> DataTable {
        let table = try DataTable(name: "T", fields: [FieldDefinition("Id", .largeInt, primaryKey: true), FieldDefinition("N", .largeInt)])
        try table.loadRows((0..<Int64(count)).map { [.integer(first + $0 * step), .integer($0 % 7)] })
        return table
    }

    /// The index agrees with a scan of the visible rows for every value in `probes`.
    private func expectIndexAgrees(_ table: DataTable, field: String, probes: some Collection<Int64>, _ comment: Comment? = nil,
                                   sourceLocation: SourceLocation = #_sourceLocation) throws {
        let index = try table.index(forField: field)
        for probe in probes {
            let scanned = table.rows.filter { $0[field] == .integer(probe) }.map(\.slot)
            let indexed = index.rows(for: .integer(probe)).map(\.slot)
            #expect(Set(indexed) == Set(scanned), "value \(probe) \(comment.map { "(\($0))" } ?? "")", sourceLocation: sourceLocation)
        }
    }

    @Test func aDenseKeyFindsEveryRowAndNothingElse() throws {
        let items = try table(count: 1_000)
        try expectIndexAgrees(items, field: "Id", probes: [0, 1, 2, 500, 999, 1_000, 1_001, -1, .max, .min])
        #expect(try items.row(forPrimaryKey: 1_000)?["N"] == .integer(999 % 7))
        #expect(try items.row(forPrimaryKey: 0) == nil)
    }

    @Test func newRowsWithFallingTemporaryKeysAndRisingRealOnes() throws {
        let items = try table(count: 100)
        for key in stride(from: Int64(-1), through: -300, by: -1) { try items.addNewRow(values: ["Id": .integer(key), "N": 1]) }
        for key in Int64(101)...400 { try items.addNewRow(values: ["Id": .integer(key), "N": 2]) }
        try expectIndexAgrees(items, field: "Id", probes: [-301, -300, -150, -1, 0, 1, 100, 101, 400, 401])
    }

    @Test func aValueTwoRowsHoldAndValuesFarAway() throws {
        let items = try table(count: 50)
        try expectIndexAgrees(items, field: "N", probes: Array(-1...8), "a non-key field: values repeat from the start")
        let far = try items.addNewRow(values: ["Id": .integer(1 << 40), "N": 3])
        try expectIndexAgrees(items, field: "Id", probes: [1, 50, 51, 1 << 40, (1 << 40) - 1])
        try items.cancelChange(for: far)
        try items.rows[3].setValue(.integer(-(1 << 50)), forKey: "Id")
        try expectIndexAgrees(items, field: "Id", probes: [4, -(1 << 50), 1, 50])
    }

    @Test func keysAtTheEndsOfInt64() throws {
        let high = try table(count: 10, first: .max - 9)
        try expectIndexAgrees(high, field: "Id", probes: [.max, .max - 9, .max - 10, .min, 0])
        try high.addNewRow(values: ["Id": .integer(.max - 20), "N": 0])
        try high.addNewRow(values: ["Id": .integer(.min), "N": 0])
        try expectIndexAgrees(high, field: "Id", probes: [.max, .max - 20, .min, .min + 1, 0])
        let low = try table(count: 10, first: .min)
        try low.addNewRow(values: ["Id": .integer(.min + 40), "N": 0])
        try expectIndexAgrees(low, field: "Id", probes: [.min, .min + 9, .min + 40, .max])
    }

    @Test func sparseKeysFromTheStart() throws {
        let items = try table(count: 200, first: -1_000_000, step: 1_000_003)
        try expectIndexAgrees(items, field: "Id", probes: [-1_000_000, -1_000_000 + 1_000_003 * 199, 0, 3])
    }

    @Test func randomEditsAgreeWithAScan() throws {
        var random = SeededGenerator(seed: 29)
        var denseSteps = 0, hashedSteps = 0
        for round in 0..<20 {
            let items = try table(count: Int.random(in: 0..<60, using: &random), first: Int64.random(in: -40...40, using: &random))
            _ = try items.index(forField: "Id").rows(for: 0)   // built now, then kept current by each edit
            _ = try items.index(forField: "N").rows(for: 0)
            for step in 0..<80 {
                let value = Int.random(in: 0..<12, using: &random) > 0 ? Int64.random(in: -120...120, using: &random)
                    : [Int64.max, .min, 1 << 33, -(1 << 33)].randomElement(using: &random)!
                let rows = items.rows
                switch Int.random(in: 0..<5, using: &random) {
                case 0 where items.rows.allSatisfy({ $0["Id"] != .integer(value) }):
                    try items.addNewRow(values: ["Id": .integer(value), "N": .integer(value % 5)])
                case 1 where !rows.isEmpty && items.rows.allSatisfy({ $0["Id"] != .integer(value) }):
                    try rows.randomElement(using: &random)!.setValue(.integer(value), forKey: "Id")
                case 2 where !rows.isEmpty:
                    try items.removeRow(rows.randomElement(using: &random)!)
                case 3 where !rows.isEmpty:
                    try rows.randomElement(using: &random)!.setValue(.integer(value), forKey: "N")
                case 4 where Int.random(in: 0..<10, using: &random) == 0:
                    try items.cancelAllChanges()
                default: break
                }
                if try items.index(forField: "Id").isDense { denseSteps += 1 } else { hashedSteps += 1 }
                let probes = Set(items.rows.compactMap { $0["Id"].integerValue } + items.rows.compactMap { $0["N"].integerValue } + [value, value &+ 1])
                try expectIndexAgrees(items, field: "Id", probes: probes, "round \(round), step \(step)")
                try expectIndexAgrees(items, field: "N", probes: probes, "round \(round), step \(step)")
            }
        }
        #expect(denseSteps > 200 && hashedSteps > 200, "both kinds of index were checked: \(denseSteps) dense, \(hashedSteps) hashed")
    }
}

import Foundation
import Testing
@testable import Relata
import RelataTestSupport

/// Numeric columns copied out as doubles for batch work (`copyNumbers`, `RowSet`).
@Suite struct NumberColumnTests {
    func copy(_ table: DataTable, _ field: String, _ rows: RowSet, originals: Bool = false) throws -> [Double] {
        let buffer = UnsafeMutableBufferPointer<Double>.allocate(capacity: rows.count)
        defer { buffer.deallocate() }
        try table.copyNumbers(ofField: field, in: rows, originals: originals, into: buffer)
        return Array(buffer)
    }

    func same(_ a: [Double], _ b: [Double]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { $0 == $1 || ($0.isNaN && $1.isNaN) }
    }

    @Test func postedAndOriginalValuesOfEveryKindOfRow() throws {
        let clients = try makeClients()
        try clients.rows[0].setValue(0.5, forKey: "ClientDiscount")
        try clients.rows[1].setValue(.null, forKey: "ClientDiscount")
        let added = try clients.addNewRow(values: ["ClientName": "New", "ClientDiscount": 0.2])
        _ = added
        let all = clients.visibleRowSet
        #expect(same(try copy(clients, "ClientDiscount", all), [0.5, .nan, 0.0, 0.2]))
        #expect(same(try copy(clients, "ClientDiscount", all, originals: true), [0.05, 0.1, 0.0, .nan]))
        #expect(same(try copy(clients, "ClientId", all), [1, 2, 3, -1]))

        // Later changes show in later copies (the pending values are mirrored as they change).
        try clients.rows[2].setValue(0.3, forKey: "ClientDiscount")
        try clients.rows[0].cancel()
        #expect(same(try copy(clients, "ClientDiscount", clients.visibleRowSet), [0.05, .nan, 0.3, 0.2]))

        // And after rows leave the table.
        try clients.cancelChange(for: added)
        try clients.removeRow(clients.rows[1])
        var delta = try clients.makeDelta()
        for index in delta.changes.indices where delta.changes[index].type == .delete { delta.changes[index].resolve() }
        try clients.accept(delta)
        #expect(same(try copy(clients, "ClientDiscount", clients.visibleRowSet), [0.05, 0.3]))
        #expect(same(try copy(clients, "ClientDiscount", clients.rowSet(in: .modified)), [0.3]))
    }

    @Test func booleansAndDates() throws {
        let table = try DataTable(name: "T", fields: [FieldDefinition("On", .boolean), FieldDefinition("At", .dateTime)])
        try table.loadRows([[true, .date(Date(timeIntervalSince1970: 10))], [false, .null]])
        #expect(same(try copy(table, "On", table.visibleRowSet), [1, 0]))
        #expect(same(try copy(table, "At", table.visibleRowSet), [10_000, .nan]), "dates as JavaScript's milliseconds")
    }

    @Test func nonNumericFieldsAndStaleRowSets() throws {
        let clients = try makeClients()
        #expect(throws: RelataError.self) { _ = try copy(clients, "ClientName", clients.visibleRowSet) }
        let set = clients.rowSet(in: .unchanged)
        #expect(set.count == 3)
        #expect(set[1] === clients.rows[1])
        #expect(set.filter(positions: { $0 != 1 }).map { $0["ClientId"] } == [1, 3])
    }

    @Test func removingPositionsKeepsTheOthersInOrderWhateverIsGiven() throws {
        let table = try DataTable(name: "T", fields: [FieldDefinition("Id", .integer, primaryKey: true)])
        try table.loadRows((1...10).map { [Value.integer(Int64($0))] })
        let all = table.visibleRowSet
        func ids(_ set: RowSet) -> [Int64] { set.map { $0["Id"].integerValue ?? -1 } }
        #expect(ids(all.removing(positions: [])) == Array(1...10))
        #expect(ids(all.removing(positions: [9, 0, 4])) == [2, 3, 4, 6, 7, 8, 9], "unsorted, first and last")
        #expect(ids(all.removing(positions: [3, 3, 3])) == [1, 2, 3, 5, 6, 7, 8, 9, 10], "a position given twice")
        #expect(ids(all.removing(positions: [-1, 10, Int.max, Int.min, 2])) == [1, 2, 4, 5, 6, 7, 8, 9, 10], "outside the set: ignored")
        #expect(ids(all.removing(positions: Set(0..<10))).isEmpty)
        let odd = all.removing(positions: stride(from: 1, to: 10, by: 2))
        #expect(ids(odd) == [1, 3, 5, 7, 9])
        #expect(ids(odd.removing(positions: [1])) == [1, 5, 7, 9], "positions are the set's own, not the table's")
    }

    /// The rows of each state, found by counting every state in one pass: against the states
    /// the rows report, through random edits — none changed, every row changed, and mixed.
    @Test func rowSetsHoldTheRowsOfEachStateThroughRandomEdits() throws {
        let table = try DataTable(name: "T", fields: [FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("N", .integer)])
        try table.loadRows((1...300).map { [Value.integer(Int64($0)), .integer(0)] })
        let states: [RowState] = [.added, .modified, .deleted]
        var deleted: Set<Int64> = []
        func check(_ step: String) throws {
            let sets = table.rowSets(in: states)
            for (state, set) in zip(states, sets) {
                #expect(set.allSatisfy { $0.rowState == state }, "\(step): a row in the \(state) set is not \(state)")
                #expect(set.count == set.slots.count && set.slots == set.slots.sorted(), "\(step): slots in order")
            }
            let visibleChanged = table.rows.filter { $0.rowState == .added || $0.rowState == .modified }.count
            #expect(sets[0].count + sets[1].count == visibleChanged, "\(step): every visible changed row is found")
            #expect(table.rowSet(in: .modified).slots == sets[1].slots)
            #expect(Set(sets[2].map { $0["Id"].integerValue ?? -1 }) == deleted, "\(step): the deleted rows")
        }
        try check("nothing changed")
        #expect(table.rowSets(in: states).allSatisfy { $0.count == 0 })
        for row in table.rows { try row.setValue(1, forKey: "N") }
        try check("every row modified")
        #expect(table.rowSets(in: states)[1].count == 300)
        var random = SeededGenerator(seed: 29)
        for step in 0..<400 {
            let rows = table.rows
            switch Int.random(in: 0..<4, using: &random) {
            case 0: try table.addNewRow(values: ["Id": .integer(Int64(1_000 + step)), "N": 2])
            case 1 where !rows.isEmpty:
                let row = rows[Int.random(in: 0..<rows.count, using: &random)]
                if row.rowState != .added { deleted.insert(row["Id"].integerValue ?? -1) }
                try table.removeRow(row)
            case 2 where !rows.isEmpty: try table.cancelChange(for: rows[Int.random(in: 0..<rows.count, using: &random)])
            default: if !rows.isEmpty { try rows[Int.random(in: 0..<rows.count, using: &random)].setValue(.integer(Int64(step)), forKey: "N") }
            }
        }
        try check("mixed")
        #expect(table.rowSets(in: states).allSatisfy { !$0.isEmpty }, "the random edits left rows in every state")
    }
}

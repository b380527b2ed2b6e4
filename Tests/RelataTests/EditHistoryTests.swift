import Foundation
import Testing
@testable import Relata

/// A table that records edits keeps what the user did, in order — not what rules did.
@Suite(.timeLimit(.minutes(1))) struct EditHistoryTests {
    /// Rules that are not idempotent, and write another table, as users' rules do.
    final class CountingRules: DataTableRules {
        let log: DataTable
        init(log: DataTable) { self.log = log }
        func rowDidAdd(_ row: DataTableRow) throws {
            try row.setValue("draft", forKey: "Status")
        }
        func rowWillPost(_ row: DataTableRow, inserting: Bool) throws {
            try row.setValue((row["Touches"].integerValue ?? 0) + 1, forKey: "Touches")
            try log.addNewRow(values: ["Note": .string("posted \(row["Status"].text)")])
        }
        func rowWillRemove(_ row: DataTableRow) throws {
            try log.addNewRow(values: ["Note": "removed"])
        }
    }

    static func tables() throws -> (tickets: DataTable, log: DataTable) {
        let tickets = try DataTable(name: "Tickets", fields: [
            FieldDefinition("TicketId", .autoInc, primaryKey: true), FieldDefinition("Status", .string),
            FieldDefinition("Touches", .integer), FieldDefinition("Title", .string),
        ])
        try tickets.loadRows([[1, "open", 0, "Printer"], [2, "open", 0, "Screen"]])
        let log = try DataTable(name: "Log", fields: [FieldDefinition("LogId", .autoInc, primaryKey: true), FieldDefinition("Note", .string)])
        tickets.rules = CountingRules(log: log)
        tickets.recordsEdits = true
        log.recordsEdits = true
        return (tickets, log)
    }

    @Test func aTableKeepsTheUsersEditsNotTheRules() throws {
        let (tickets, log) = try Self.tables()
        let printer = tickets.rows[0]
        try printer.setValue("closed", forKey: "Status")
        try printer.edit()
        try printer.setValue("Printer 2", forKey: "Title")
        try printer.setValue("open", forKey: "Status")
        try printer.post()
        let added = try tickets.addNewRow(values: ["Title": "Mouse"])
        try tickets.removeRow(tickets.rows[1])

        #expect(printer["Touches"] == 2, "the rule ran once per edit")
        #expect(printer.edits.map(\.kind) == [.update, .update])
        #expect(printer.edits.map(\.values) == [["Status": "closed"], ["Title": "Printer 2", "Status": "open"]],
                "what the user set, not Touches")
        #expect(added.edits.map(\.kind) == [.insert])
        #expect(added.edits[0].values == ["Title": "Mouse"], "onNewRow's draft status is the rules' work")
        let screen = try #require(tickets.deletedRows.first)
        #expect(screen.edits.map(\.kind) == [.delete])
        let sequences = (printer.edits + added.edits + screen.edits).map(\.sequence)
        #expect(sequences == sequences.sorted() && Set(sequences).count == 4, "one sequence across the user's edits: \(sequences)")
        #expect(log.rows.count == 4 && log.rows.allSatisfy { $0.edits.isEmpty }, "rows the rules added carry no edits")

        let delta = try tickets.makeDelta()
        #expect(delta.changes.map { $0.edits?.count } == [2, 1, 1])
        let logDelta = try log.makeDelta()
        #expect(logDelta.changes.allSatisfy { $0.edits == [] }, "made by rules: the server's rules make them again")
    }

    @Test func aDiscardedOrRefusedEditLeavesNoTrace() throws {
        let (tickets, _) = try Self.tables()
        let printer = tickets.rows[0]
        try printer.edit()
        try printer.setValue("gone", forKey: "Status")
        try printer.discard()
        #expect(printer.edits.isEmpty && !printer.isChanged)

        final class Refusing: DataTableRules {
            func rowDidAdd(_ row: DataTableRow) throws {}
            func rowWillPost(_ row: DataTableRow, inserting: Bool) throws { throw RelataError(.invalidArgument, "no") }
            func rowWillRemove(_ row: DataTableRow) throws {}
        }
        tickets.rules = Refusing()
        #expect(throws: RelataError.self) { try printer.setValue("closed", forKey: "Status") }
        #expect(printer.edits.isEmpty)
    }

    @Test func revertingOrApplyingForgetsTheEditsAndAFailedApplyKeepsThem() throws {
        let (tickets, _) = try Self.tables()
        try tickets.rows[0].setValue("closed", forKey: "Status")
        try tickets.rows[0].cancel()
        #expect(tickets.rows[0].edits.isEmpty)

        try tickets.rows[0].setValue("closed", forKey: "Status")
        try tickets.rows[1].setValue("closed", forKey: "Status")
        var delta = try tickets.makeDelta()
        delta.changes[0].resolve()
        delta.changes[1].fail("refused")
        try tickets.accept(delta)
        #expect(tickets.rows[0].edits.isEmpty)
        #expect(tickets.rows[1].edits.count == 1, "sent again with the next apply")
    }

    @Test func withoutRecordingNoEditsAreKept() throws {
        let (tickets, _) = try Self.tables()
        tickets.recordsEdits = false
        try tickets.rows[0].setValue("closed", forKey: "Status")
        #expect(tickets.rows[0].edits.isEmpty)
        #expect(try tickets.makeDelta().changes[0].edits == nil, "a delta that says nothing of edits")
    }

    @Test func editsTravelAsJSONAndInABriefcase() throws {
        let (tickets, _) = try Self.tables()
        try tickets.rows[0].setValue("closed", forKey: "Status")
        try tickets.addNewRow(values: ["Title": "Mouse"])
        let delta = try tickets.makeDelta()
        #expect(try DeltaJSON.decode(DeltaJSON.encode([delta])) == [delta])

        let highest = delta.changes.compactMap { $0.edits?.last?.sequence }.max() ?? 0
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("edits-\(UUID().uuidString).briefcase")
        defer { try? FileManager.default.removeItem(at: file) }
        let briefcase = Briefcase()
        briefcase.addTable(tickets)
        try briefcase.save(to: file)
        let loaded = try #require(try Briefcase(contentsOf: file).table(named: "Tickets"))
        loaded.recordsEdits = true   // a RemoteDataAdapter taking the briefcase turns it on
        #expect(try loaded.makeDelta().changes.map(\.edits) == delta.changes.map(\.edits))
        #expect(EditSequence.next() > highest, "edits made after a load come after the briefcase's")
    }

    @Test func aHandMadeEditListIsCheckedBeforeAnythingRuns() throws {
        let bad = #"{"deltas":[{"tableName":"T","keyFields":["Id"],"loggedFields":["Id"],"changes":[{"changeId":1,"type":"update","status":"pending","oldValues":{},"newValues":{},"refreshedValues":{},"edits":[{"sequence":0,"kind":"update","values":{}}]}]}]}"#
        #expect(throws: RelataError.self) { try DeltaJSON.decode(Array(bad.utf8)) }
    }
}

extension EditHistoryTests {
    /// An edit that sets a field back to its original while it changes another passes through
    /// "unchanged" halfway through its post: the row's earlier edits must survive it.
    @Test func anEditPassingThroughUnchangedKeepsTheEarlierEdits() throws {
        let (tickets, _) = try Self.tables()
        tickets.rules = nil
        let printer = tickets.rows[0]
        try printer.setValue("closed", forKey: "Status")
        try printer.setValues(["Status": "open", "Title": "Printer 2"])
        #expect(printer.edits.map(\.values) == [["Status": "closed"], ["Status": "open", "Title": "Printer 2"]])
        try printer.setValue("Printer", forKey: "Title")
        #expect(!printer.isChanged && printer.edits.isEmpty, "the user's edits left the row as it was: nothing to send")
    }
}

import Testing
@testable import Relata

/// The hook tables call before rows change (the JavaScript rules build on it).
@Suite struct RulesHookTests {
    struct Rejected: Error {}

    final class Recorder: DataTableRules {
        var events: [String] = []
        var failPost: (DataTableRow) -> Bool = { _ in false }
        var failRemove = false
        var onAdd: (DataTableRow) throws -> Void = { _ in }

        func rowDidAdd(_ row: DataTableRow) throws {
            events.append("add")
            try onAdd(row)
        }
        func rowWillPost(_ row: DataTableRow, inserting: Bool) throws {
            events.append(inserting ? "insert \(row["ClientName"].text)" : "update \(row["ClientName"].text)")
            if failPost(row) { throw Rejected() }
        }
        func rowWillRemove(_ row: DataTableRow) throws {
            events.append("remove")
            if failRemove { throw Rejected() }
        }
    }

    @Test func directChangesArePostedOneByOne() throws {
        let clients = try makeClients()
        let rules = Recorder()
        clients.rules = rules
        try clients.rows[0].setValue("Acme Ltd", forKey: "ClientName")
        #expect(rules.events == ["update Acme Ltd"], "the rules see the new value")
        #expect(clients.rows[0].rowState == .modified)
        #expect(!clients.rows[0].isInEditMode)
    }

    @Test func aRejectedDirectChangeLeavesTheRowAsItWas() throws {
        let clients = try makeClients()
        let rules = Recorder()
        rules.failPost = { $0["ClientName"] == "Bad" }
        clients.rules = rules
        let row = clients.rows[0]
        try row.setValue("Pending", forKey: "ClientName")
        let before = try snapshot(row)
        #expect(throws: Rejected.self) { try row.setValue("Bad", forKey: "ClientName") }
        #expect(try snapshot(row) == before)
    }

    @Test func editModePostsOnceAndKeepsTheEditOnFailure() throws {
        let clients = try makeClients()
        let rules = Recorder()
        rules.failPost = { $0["ContactPhone"] == "none" }
        clients.rules = rules
        let row = clients.rows[1]
        try row.edit()
        try row.setValue("G", forKey: "ClientName")
        try row.setValue("none", forKey: "ContactPhone")
        #expect(rules.events.isEmpty)
        #expect(throws: Rejected.self) { try row.post() }
        #expect(row.isInEditMode, "the editor keeps its values")
        #expect(row["ContactPhone"] == "none")
        try row.setValue("555", forKey: "ContactPhone")
        try row.post()
        #expect(rules.events == ["update G", "update G"])
        #expect(row.rowState == .modified)
    }

    @Test func addingRunsOnNewRowThenInsert() throws {
        let clients = try makeClients()
        let rules = Recorder()
        rules.onAdd = { try $0.setValue("Default name", forKey: "ClientName") }
        clients.rules = rules
        let row = try clients.addNewRow()
        #expect(rules.events == ["add", "insert Default name"])
        #expect(row.rowState == .added)
        #expect(clients.rowCount == 4)

        rules.events = []
        let editing = try clients.addNewRow(values: [:], inEditMode: true)
        #expect(rules.events == ["add"])
        try editing.post()
        #expect(rules.events == ["add", "insert Default name"])
    }

    @Test func aRejectedAdditionAddsNothing() throws {
        let clients = try makeClients()
        let rules = Recorder()
        rules.failPost = { _ in true }
        clients.rules = rules
        #expect(throws: Rejected.self) { try clients.addNewRow(values: ["ClientName": "X"]) }
        #expect(clients.rowCount == 3)
        #expect(!clients.hasChanges)
    }

    @Test func aRejectedRemovalKeepsTheRow() throws {
        let clients = try makeClients()
        let rules = Recorder()
        rules.failRemove = true
        clients.rules = rules
        #expect(throws: Rejected.self) { try clients.removeRow(clients.rows[0]) }
        #expect(clients.rows[0].rowState == .unchanged)
        rules.failRemove = false
        try clients.removeRow(clients.rows[0])
        #expect(clients.rowCount == 2)
    }
}

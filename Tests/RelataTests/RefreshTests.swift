import Foundation
import Testing
@testable import Relata

/// Refreshing a table's rows from its source while it has pending changes.
@Suite struct RefreshTests {
    /// The source's rows now: Acme as fetched, Globex renamed by someone, Initech gone, Hooli new.
    func freshRows() throws -> DataTable {
        let fresh = try DataTable(name: "Clients", fields: clientFields)
        try fresh.loadRows([
            [1, "Acme", "555-0100", "1 Road Runner Way", .null, 0.05],
            [2, "Globex Corp", .null, "Cypress Creek", "Big account", 0.1],
            [4, "Hooli", .null, .null, .null, 0.0],
        ])
        return fresh
    }

    @Test func unchangedRowsAreReplacedAndPendingChangesKept() throws {
        let clients = try makeClients()
        let acme = clients.rows[0]
        try acme.setValue("Acme Ltd", forKey: "ClientName")
        let added = try clients.addNewRow(values: ["ClientName": "Stark"])
        let conflicts = try clients.refreshRows(from: freshRows())
        #expect(conflicts.isEmpty)
        #expect(clients.rows.map { $0["ClientName"] } == ["Acme Ltd", "Stark", "Globex Corp", "Hooli"])
        #expect(acme.isInTable && acme.rowState == .modified && acme.originalValue(forKey: "ClientName") == "Acme")
        #expect(added.rowState == .added)
        #expect(try clients.makeDelta().changes.map(\.type) == [.update, .insert])
        #expect(try clients.row(forPrimaryKey: 4)?.rowState == .unchanged)
        #expect(try clients.row(forPrimaryKey: 3) == nil)
    }

    @Test func aRowChangedOrGoneAtTheSourceIsAConflictNotOverwritten() throws {
        let clients = try makeClients()
        let globex = clients.rows[1], initech = clients.rows[2]
        try globex.setValue(0.2, forKey: "ClientDiscount")
        try clients.removeRow(initech)
        let conflicts = try clients.refreshRows(from: freshRows())
        #expect(conflicts.map(\.row["ClientId"]) == [2, 3])
        #expect(conflicts[0].fields == ["ClientName"])
        #expect(conflicts[0].message.contains("ClientName"))
        #expect(conflicts[1].message.contains("no longer at the source"))
        #expect(globex["ClientDiscount"] == 0.2, "the user's value stays")
        #expect(globex.originalValue(forKey: "ClientName") == "Globex", "the old originals stay, so an apply is refused as a conflict")
        #expect(globex.failureMessage == conflicts[0].message)
        #expect(initech.rowState == .deleted)
        #expect(clients.rows.count == 3)   // Acme, Globex (pending), Hooli
    }

    @Test func otherFieldsOrNoKeyAreRefusedAndNothingChanges() throws {
        let clients = try makeClients()
        try clients.rows[0].setValue("Acme Ltd", forKey: "ClientName")
        let other = try DataTable(name: "Clients", fields: [FieldDefinition("ClientId", .integer, primaryKey: true)])
        #expect(throws: RelataError.self) { try clients.refreshRows(from: other) }
        let keyless = try DataTable(name: "Log", fields: [FieldDefinition("Text", .string)])
        try keyless.loadRows([["a"]])
        try keyless.rows[0].setValue("b", forKey: "Text")
        let fresh = try DataTable(name: "Log", fields: keyless.fields)
        #expect(throws: RelataError.self) { try keyless.refreshRows(from: fresh) }
        #expect(keyless.rows.map { $0["Text"] } == ["b"])
    }
}

@Suite struct HiddenRowTests {
    @Test func rowsLoadedOrAddedAfterADeletionAreSeen() throws {
        let clients = try makeClients()
        try clients.removeRow(clients.rows[0])
        #expect(clients.rows.count == 2)
        try clients.loadRows([[7, "Wayne", .null, .null, .null, 0.0]])
        #expect(clients.rows.count == 3)
        let added = try clients.addNewRow(values: ["ClientName": "Stark"])
        #expect(clients.rows.last === added)
        #expect(clients.rowCount == 4)
    }
}

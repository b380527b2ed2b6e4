import Testing
@testable import Relata

/// Two-phase editing: edit, post, discard.
@Suite struct EditModeTests {
    @Test func postMakesEditsPending() throws {
        let clients = try makeClients()
        let row = clients.rows[0]
        try row.edit()
        #expect(row.isInEditMode)
        try row.setValue("Edited", forKey: "ClientName")
        #expect(row["ClientName"] == "Edited", "the editor sees its own changes")
        #expect(row.rowState == .unchanged, "not visible outside until posted")
        #expect(try clients.makeDelta().changes.isEmpty)
        #expect(try clients.rows(where: "ClientName = 'Edited'").isEmpty)
        try row.post()
        #expect(!row.isInEditMode)
        #expect(row.rowState == .modified)
        #expect(try clients.rows(where: "ClientName = 'Edited'").count == 1)
    }

    @Test func discardRestoresTheExactPreEditState() throws {
        let clients = try makeClients()
        let row = clients.rows[0]
        try row.setValue("Pending", forKey: "ClientName")
        let before = try snapshot(row)
        try row.edit()
        try row.setValue("In editor", forKey: "ClientName")
        try row.setValue("555", forKey: "ContactPhone")
        try row.discard()
        #expect(try snapshot(row) == before)
        #expect(row["ClientName"] == "Pending", "earlier pending changes survive a discard")
        #expect(row.rowState == .modified)
    }

    @Test func rowAddedInEditModeIsInvisibleUntilPosted() throws {
        let clients = try makeClients()
        let row = try clients.addNewRow(values: ["ClientName": "Hidden"], inEditMode: true)
        #expect(row.rowState == .addedInEditMode)
        #expect(row.isInEditMode)
        #expect(clients.rowCount == 3)
        #expect(!clients.rows.contains { $0 === row })
        #expect(try clients.rows(where: "ClientName = 'Hidden'").isEmpty)
        #expect(try clients.makeDelta().changes.isEmpty)
        #expect(try clients.index(forField: "ClientName").row(for: "Hidden") == nil)
        try row.post()
        #expect(row.rowState == .added)
        #expect(clients.rowCount == 4)
        #expect(try clients.index(forField: "ClientName").row(for: "Hidden") === row)
        #expect(try clients.makeDelta().changes.map(\.type) == [.insert])
    }

    @Test func discardingARowAddedInEditModeRemovesIt() throws {
        let clients = try makeClients()
        let row = try clients.addNewRow(values: ["ClientName": "Gone"], inEditMode: true)
        try row.discard()
        #expect(clients.rowCount == 3)
        #expect(row.description == "<DataTableRow Clients removed>")
    }

    @Test func postChecksRequiredFieldsOfANewRow() throws {
        let clients = try makeClients()
        let row = try clients.addNewRow(values: [:], inEditMode: true)
        try row.setValue("555", forKey: "ContactPhone")
        let error = relataError { try row.post() }
        #expect(error?.code == .requiredValueMissing)
        #expect(error?.field == "ClientName")
        #expect(row.isInEditMode, "the row stays in edit mode")
        #expect(row["ContactPhone"] == "555", "nothing typed is lost")
        try row.setValue("Named", forKey: "ClientName")
        try row.post()
        #expect(row.rowState == .added)
    }

    @Test func postOutsideEditModeIsAnError() throws {
        let clients = try makeClients()
        #expect(relataError { try clients.rows[0].post() }?.code == .invalidRowState)
        try clients.rows[0].discard()
    }

    @Test func editIsIdempotentAndDeletedRowsCannotBeEdited() throws {
        let clients = try makeClients()
        let row = clients.rows[0]
        try row.edit()
        try row.setValue("A", forKey: "ClientName")
        try row.edit()
        #expect(row["ClientName"] == "A")
        try row.discard()
        try clients.removeRow(clients.rows[1])
        let deleted = clients.deletedRows[0]
        #expect(relataError { try deleted.edit() }?.code == .invalidRowState)
    }

    @Test func invalidValuesInEditModeAreRejectedAtOnce() throws {
        let clients = try makeClients()
        let row = clients.rows[0]
        try row.edit()
        #expect(relataError { try row.setValue(.null, forKey: "ClientName") }?.code == .requiredValueMissing)
        #expect(row["ClientName"] == "Acme")
    }
}

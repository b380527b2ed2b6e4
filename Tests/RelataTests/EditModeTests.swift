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

    /// A post that changes nothing, or changes every value back, leaves no trace: no change, no
    /// record kept for the row — not even while observers hear of the post.
    @Test func aPostThatChangesNothingLeavesNoTrace() throws {
        let clients = try makeClients()
        let row = clients.rows[0], other = clients.rows[1]
        let name = row["ClientName"], phone = row["ContactPhone"]
        try row.edit()
        try row.setValue(name, forKey: "ClientName")
        try row.post()
        #expect(row.rowState == .unchanged && !clients.hasChanges && row.changeId == 0)
        #expect(!clients.changes.isDirty(row.slot), "no record left for the row")

        try other.setValue("Changed", forKey: "ClientName")
        try row.edit()
        try row.setValue("Elsewhere", forKey: "ClientName")
        try row.setValue("555-0199", forKey: "ContactPhone")
        try row.post()
        #expect(row.rowState == .modified && row.changeId != 0)
        var heard: [(state: RowState, record: Bool)] = []
        let observation = clients.observe { event in
            if event == .tableChanged { heard.append((row.rowState, clients.changes.isDirty(row.slot))) }
        }
        try row.edit()
        try row.setValue(name, forKey: "ClientName")
        try row.setValue(phone, forKey: "ContactPhone")
        try row.post()
        observation.cancel()
        #expect(row.rowState == .unchanged && row.changeId == 0, "every value back: the row is unchanged again")
        #expect(!clients.changes.isDirty(row.slot))
        #expect(heard.count == 1 && heard.allSatisfy { $0.state == .unchanged && !$0.record }, "\(heard)")
        #expect(try clients.makeDelta().changes.map(\.changeId) == [other.changeId])
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

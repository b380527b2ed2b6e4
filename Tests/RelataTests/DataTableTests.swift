import Foundation
import Testing
@testable import Relata

@Suite struct DataTableTests {
    @Test func descriptionInTheSeedsFormat() throws {
        let clients = try makeClients()
        #expect(clients.description == """
            <DataTable Clients>
              <FieldDefinition Clients.ClientId AutoInc PK>
              <FieldDefinition Clients.ClientName String(50) required>
              <FieldDefinition Clients.ContactPhone String(20)>
              <FieldDefinition Clients.ContactAddress String(100)>
              <FieldDefinition Clients.AdditionalInfo Memo>
              <FieldDefinition Clients.ClientDiscount Float>
            """)
    }

    @Test func rowsAndRowAccess() throws {
        let clients = try makeClients()
        #expect(clients.rowCount == 3)
        #expect(clients.rows.count == 3)
        #expect(clients.row(at: 2)["ClientName"] == "Initech")
        #expect(try clients.row(forPrimaryKey: 2)?["ClientName"] == "Globex")
        #expect(try clients.row(forPrimaryKey: 99) == nil)
        #expect(try clients.index(forField: "ContactPhone").row(for: "555-0199")?["ClientId"] == 3)
        #expect(clients.primaryKeyFields.map(\.name) == ["ClientId"])
    }

    @Test func rowsLoadByFieldName() throws {
        let table = try DataTable(name: "T", fields: [FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("Name", .string)])
        try table.loadRows(named: [["id": 1, "NAME": "one"], ["Id": 2]])
        #expect(table.rows.map { $0["Name"] } == ["one", .null])
        #expect(table.rows.allSatisfy { $0.rowState == .unchanged })
        let error = #expect(throws: RelataError.self) { try table.loadRows(named: [["Id": 3], ["Nmae": "x"]]) }
        #expect(error?.description == "T.Nmae, row 2 to load: the table has no such field (fields: Id, Name)")
        #expect(table.rowCount == 2, "nothing of a bad batch is loaded")
    }

    @Test func duplicateFieldNamesAreRejected() {
        let error = relataError {
            _ = try DataTable(name: "T", fields: [FieldDefinition("A", .integer), FieldDefinition("a", .string)])
        }
        #expect(error?.code == .invalidDefinition)
        #expect(error?.field == "a")
    }

    @Test func addNewRowGivesTemporaryNegativeKeysAndDefaults() throws {
        let clients = try makeClients()
        let first = try clients.addNewRow(values: ["ClientName": "One"])
        let second = try clients.addNewRow()
        #expect(first["ClientId"] == -1)
        #expect(second["ClientId"] == -2)
        #expect(first["ClientDiscount"] == 0.0, "default value")
        #expect(first.rowState == .added)
        #expect(clients.rowCount == 5)
    }

    @Test func addNewRowRejectsUnknownFieldsAndAutoIncrementValues() throws {
        let clients = try makeClients()
        let unknown = relataError { try clients.addNewRow(values: ["ClientNmae": "Typo"]) }
        #expect(unknown?.code == .unknownField)
        #expect(unknown?.field == "ClientNmae")
        #expect(unknown?.message.contains("ClientName") == true, "the message lists the real fields")
        let autoInc = relataError { try clients.addNewRow(values: ["ClientId": 7, "ClientName": "X"]) }
        #expect(autoInc?.code == .readOnlyField)
        #expect(autoInc?.field == "ClientId")
        #expect(clients.rowCount == 3, "nothing was added")
    }

    @Test func wrongValuesNameTableFieldAndRowAndChangeNothing() throws {
        let clients = try makeClients()
        let row = clients.rows[0]
        let before = try snapshot(row)

        let type = relataError { try row.setValue("lots", forKey: "ClientDiscount") }
        #expect(type?.code == .typeMismatch)
        #expect(type?.description == "Clients.ClientDiscount, row (ClientId=1): 'lots' (string) is not a valid float value")

        let size = relataError { try row.setValue(.string(String(repeating: "x", count: 51)), forKey: "ClientName") }
        #expect(size?.code == .valueTooLong)
        #expect(size?.message == "value is 51 characters, the field allows 50")

        let required = relataError { try row.setValue(.null, forKey: "ClientName") }
        #expect(required?.code == .requiredValueMissing)
        #expect(required?.field == "ClientName")

        let readOnly = relataError { try row.setValue(5, forKey: "ClientId") }
        #expect(readOnly?.code == .readOnlyField)

        let unknown = relataError { try row.setValue(1, forKey: "Nope") }
        #expect(unknown?.code == .unknownField)

        #expect(try snapshot(row) == before)
    }

    @Test func readOnlyFields() throws {
        let table = try DataTable(name: "T", fields: [FieldDefinition("Id", .integer, primaryKey: true),
                                                      FieldDefinition("Stamp", .dateTime, readOnly: true)])
        try table.loadRows([[1, .date(Date(timeIntervalSince1970: 0))]])
        let error = relataError { try table.rows[0].setValue(.date(Date()), forKey: "Stamp") }
        #expect(error?.code == .readOnlyField)
        #expect(error?.table == "T")
    }

    @Test func removeRowMarksDeletedAndHidesIt() throws {
        let clients = try makeClients()
        let row = clients.rows[1]
        try clients.removeRow(row)
        #expect(row.rowState == .deleted)
        #expect(clients.rowCount == 2)
        #expect(clients.deletedRows.map { $0 === row } == [true])
        #expect(clients.row(at: 1)["ClientName"] == "Initech")
        #expect(relataError { try row.setValue("X", forKey: "ClientName") }?.code == .invalidRowState)
        #expect(relataError { try clients.removeRow(row) }?.code == .invalidRowState)
        try clients.cancelChange(for: row)
        #expect(row.rowState == .unchanged)
        #expect(clients.rowCount == 3)
    }

    @Test func removingAnAddedRowDropsIt() throws {
        let clients = try makeClients()
        let row = try clients.addNewRow(values: ["ClientName": "Temp"])
        try clients.removeRow(row)
        #expect(clients.rowCount == 3)
        #expect(try clients.makeDelta().changes.isEmpty)
    }

    @Test func cancelChangeForAnAddedRowRemovesIt() throws {
        let clients = try makeClients()
        let row = try clients.addNewRow(values: ["ClientName": "Temp"])
        try clients.cancelChange(for: row)
        #expect(clients.rowCount == 3)
        #expect(!clients.hasChanges)
    }

    @Test func cancelAllChanges() throws {
        let clients = try makeClients()
        try clients.rows[0].setValue("Changed", forKey: "ClientName")
        try clients.removeRow(clients.rows[1])
        try clients.addNewRow(values: ["ClientName": "Added"])
        #expect(clients.changedRows.count == 3)
        try clients.cancelAllChanges()
        #expect(!clients.hasChanges)
        #expect(clients.rows.map { $0["ClientName"] } == ["Acme", "Globex", "Initech"])
        #expect(clients.rows.allSatisfy { $0.rowState == .unchanged })
    }

    @Test func rowsFromAnotherTableAreRejected() throws {
        let clients = try makeClients(), others = try makeClients()
        #expect(relataError { try clients.removeRow(others.rows[0]) }?.code == .foreignRow)
    }

    @Test func loadRowsChecksTypes() throws {
        let table = try DataTable(name: "T", fields: [FieldDefinition("Small", .smallInt)])
        let error = relataError { try table.loadRows([[1], [70000]]) }
        #expect(error?.code == .valueOutOfRange)
        #expect(error?.location == "row 2 to load")
        #expect(relataError { try table.loadRows([[1, 2]]) }?.code == .invalidImport)
    }
}

import Foundation
import Testing
@testable import Relata

/// Every method and property of seed 003 (DADataTableRow).
@Suite struct DataTableRowTests {
    @Test func valueAndSetValue() throws {
        let clients = try makeClients()
        let row = clients.rows[0]
        #expect(try row.value(forKey: "ClientName") == "Acme")
        try row.setValue("Acme Ltd", forKey: "ClientName")
        #expect(try row.value(forKey: "ClientName") == "Acme Ltd")
        #expect(try row.value(forKey: "clientname") == "Acme Ltd", "field names match case-insensitively")
        #expect(try row.value(forKey: "ClientDiscount", as: Double.self) == 0.05)
        #expect(try row.value(forKey: "AdditionalInfo", as: String.self) == nil)
    }

    @Test func subscriptAndDynamicMember() throws {
        let clients = try makeClients()
        let row = clients.rows[1]
        #expect(row["ClientName"] == "Globex")
        row["ClientName"] = "Globex Corp"
        #expect(row.ClientName == "Globex Corp")
        row.ContactPhone = "555-0111"
        #expect(row["ContactPhone"] == "555-0111")
        #expect(row.rowState == .modified)
    }

    @Test func originalValue() throws {
        let clients = try makeClients()
        let row = clients.rows[0]
        try row.setValue("Acme Ltd", forKey: "ClientName")
        #expect(row.originalValue(forKey: "ClientName") == "Acme")
        #expect(row.originalValue(forKey: "ContactPhone") == "555-0100", "unchanged fields: the same as the value")
        let added = try clients.addNewRow(values: ["ClientName": "New"])
        #expect(added.originalValue(forKey: "ClientName") == nil, "added rows have no original")
    }

    @Test func changedAndRowState() throws {
        let clients = try makeClients()
        let row = clients.rows[0]
        #expect(!row.isChanged)
        #expect(row.rowState == .unchanged)
        try row.setValue(0.2, forKey: "ClientDiscount")
        #expect(row.isChanged)
        #expect(row.rowState == .modified)
        #expect(row.changedFieldNames == ["ClientDiscount"])
    }

    @Test func settingTheOriginalValueBackMakesTheRowUnchanged() throws {
        let clients = try makeClients()
        let row = clients.rows[0]
        try row.setValue("Other", forKey: "ClientName")
        try row.setValue("Acme", forKey: "ClientName")
        #expect(row.rowState == .unchanged)
        #expect(row.changeId == 0)
    }

    @Test func cancelRestoresEverything() throws {
        let clients = try makeClients()
        let row = clients.rows[0]
        try row.setValue("Other", forKey: "ClientName")
        try row.setValue(.null, forKey: "ContactPhone")
        try row.cancel()
        #expect(row.rowState == .unchanged)
        #expect(row["ClientName"] == "Acme")
        #expect(row["ContactPhone"] == "555-0100")
    }

    @Test func cancelOnAnAddedRowKeepsItInTheTable() throws {
        let clients = try makeClients()
        let row = try clients.addNewRow(values: ["ClientName": "New"])
        try row.cancel()
        #expect(clients.rowCount == 4)
        #expect(row.rowState == .added)
        #expect(row["ClientName"] == .null)
    }

    @Test func cancelChangeForKey() throws {
        let clients = try makeClients()
        let row = clients.rows[0]
        try row.setValue("Other", forKey: "ClientName")
        try row.setValue(0.3, forKey: "ClientDiscount")
        try row.cancelChange(forKey: "ClientName")
        #expect(row["ClientName"] == "Acme")
        #expect(row.rowState == .modified, "another change is left")
        try row.cancelChange(forKey: "ClientDiscount")
        #expect(row.rowState == .unchanged)
    }

    @Test func revertAndRevertValue() throws {
        let clients = try makeClients()
        let row = clients.rows[2]
        try row.setValue("Initrode", forKey: "ClientName")
        try row.revertValue(forKey: "ClientName")
        #expect(row.rowState == .unchanged)
        try row.setValue("Initrode", forKey: "ClientName")
        try row.setValue("x", forKey: "AdditionalInfo")
        try row.revert()
        #expect(row.rowState == .unchanged)
        #expect(row["AdditionalInfo"] == .null)
    }

    @Test func changeIdTiesTheRowToItsChange() throws {
        let clients = try makeClients()
        let first = clients.rows[0], second = clients.rows[1]
        #expect(first.changeId == 0)
        try second.setValue("B", forKey: "ClientName")
        try first.setValue("A", forKey: "ClientName")
        #expect(second.changeId > 0)
        #expect(first.changeId > second.changeId)
        let delta = try clients.makeDelta()
        #expect(delta.changes.map(\.changeId) == [second.changeId, first.changeId])
    }

    @Test func fieldCountAndTable() throws {
        let clients = try makeClients()
        let row = clients.rows[0]
        #expect(row.fieldCount == 6)
        #expect(row.table === clients)
    }

    @Test func lockAndUnlock() throws {
        let clients = try makeClients()
        let row = clients.rows[0]
        row.lock()
        #expect(row.isLocked)
        let before = try snapshot(row)
        let error = relataError { try row.setValue("X", forKey: "ClientName") }
        #expect(error?.code == .rowLocked)
        #expect(error?.row == "row (ClientId=1)")
        #expect(relataError { try row.cancel() }?.code == .rowLocked)
        #expect(relataError { try clients.removeRow(row) }?.code == .rowLocked)
        #expect(try snapshot(row) == before)
        row.unlock()
        #expect(!row.isLocked)
        try row.setValue("X", forKey: "ClientName")
        #expect(row["ClientName"] == "X")
    }

    @Test func sameRowObjectEverywhere() throws {
        let clients = try makeClients()
        let fromRows = clients.rows[1]
        let fromFilter = try clients.rows(where: "ClientName = 'Globex'")[0]
        let fromSort = try clients.rows(sortedBy: "ClientName", ascending: false)[1]
        let fromKey = try clients.row(forPrimaryKey: 2)
        #expect(fromRows === fromFilter)
        #expect(fromRows === fromSort)
        #expect(fromRows === fromKey)
        try fromFilter.setValue("G", forKey: "ClientName")
        #expect(fromRows["ClientName"] == "G")
    }

    @Test func description() throws {
        let clients = try makeClients()
        try clients.rows[0].setValue("X", forKey: "ClientName")
        #expect(clients.rows[0].description == "<DataTableRow Clients (ClientId=1) modified>")
    }
}

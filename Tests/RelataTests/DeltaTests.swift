import Foundation
import Testing
@testable import Relata

@Suite(.timeLimit(.minutes(1))) struct DeltaTests {
    @Test func buildingADeltaDoesNotChangeTheTable() throws {
        let clients = try makeClients()
        try clients.rows[0].setValue("Acme Ltd", forKey: "ClientName")
        let before = try clients.rows.map(snapshot)
        _ = try clients.makeDelta()
        _ = try clients.makeDelta()
        #expect(try clients.rows.map(snapshot) == before)
    }

    @Test func insertUpdateDeleteCarryTheRightValues() throws {
        let clients = try makeClients()
        try clients.rows[0].setValue("Acme Ltd", forKey: "ClientName")
        try clients.removeRow(clients.rows[1])
        try clients.addNewRow(values: ["ClientName": "Hooli"])
        let delta = try clients.makeDelta()
        #expect(delta.tableName == "Clients")
        #expect(delta.keyFields == ["ClientId"])
        #expect(delta.changes.map(\.type) == [.update, .delete, .insert])
        let update = delta.changes[0], delete = delta.changes[1], insert = delta.changes[2]
        #expect(update.oldValues["ClientName"] == "Acme")
        #expect(update.newValues["ClientName"] == "Acme Ltd")
        #expect(update.changedFields == ["ClientName"])
        #expect(delete.oldValues["ClientName"] == "Globex")
        #expect(delete.newValues.isEmpty)
        #expect(insert.oldValues.isEmpty)
        #expect(insert.newValues["ClientId"] == -1)
        #expect(insert.newValues["ClientName"] == "Hooli")
        #expect(delta.changes.allSatisfy { $0.status == .pending })
    }

    @Test func everyFieldTravelsButOnlyLogChangesFieldsAreWritten() throws {
        let table = try DataTable(name: "T", fields: [
            FieldDefinition("Id", .integer, primaryKey: true, logChanges: false),
            FieldDefinition("Logged", .string),
            FieldDefinition("Silent", .string, logChanges: false),
        ])
        try table.loadRows([[1, "a", "b"]])
        try table.rows[0].setValue("c", forKey: "Silent")
        try table.rows[0].setValue("d", forKey: "Logged")
        let delta = try table.makeDelta()
        #expect(delta.loggedFields == ["Id", "Logged"], "keys are always written")
        #expect(delta.changes[0].newValues == ["Id": 1, "Logged": "d", "Silent": "c"], "the rules read every field")
        #expect(delta.changes[0].oldValues == ["Id": 1, "Logged": "a", "Silent": "b"])
    }

    /// Every change gets values of its own, whatever the names (long, non-ASCII, many) and
    /// whatever the caller then does to one change's values.
    @Test func eachChangeHasItsOwnValuesByName() throws {
        let names = ["Id"] + (1...40).map { "A field with a rather long name nº \($0) — ü" }
        let table = try DataTable(name: "Wide", fields: [FieldDefinition("Id", .integer, primaryKey: true)]
                                  + names.dropFirst().map { FieldDefinition($0, .string) })
        try table.loadRows((1...3).map { row in [.integer(Int64(row))] + names.dropFirst().map { .string("\(row) \($0)") } })
        try table.rows[2].setValue("changed", forKey: names[7])
        try table.rows[0].setValue("first", forKey: names[40])
        try table.removeRow(table.rows[1])
        var delta = try table.makeDelta()
        #expect(delta.changes.map(\.type) == [.update, .update, .delete])
        for (change, row) in zip(delta.changes, [3, 1, 2]) {
            var expected = FieldValues(uniqueKeysWithValues: names.dropFirst().map { ($0, Value.string("\(row) \($0)")) })
            expected["Id"] = .integer(Int64(row))
            #expect(change.oldValues == expected)
        }
        #expect(delta.changes[0].newValues[names[7]] == "changed")
        #expect(delta.changes[1].newValues[names[40]] == "first")
        #expect(delta.changes[0].newValues.count == names.count && delta.changes[2].newValues.isEmpty)
        delta.changes[0].newValues[names[1]] = "mine"
        delta.changes[0].oldValues["Id"] = nil
        #expect(delta.changes[1].newValues[names[1]] == .string("1 \(names[1])"))
        #expect(delta.changes[1].oldValues["Id"] == 1)
        #expect(try table.makeDelta().changes[0].newValues[names[1]] == .string("3 \(names[1])"))
    }

    @Test func missingRequiredValueStopsTheBuild() throws {
        let clients = try makeClients()
        let row = try clients.addNewRow()
        let error = relataError { _ = try clients.makeDelta() }
        #expect(error?.code == .requiredValueMissing)
        #expect(error?.field == "ClientName")
        #expect(error?.row == "row (ClientId=-1)")
        try row.setValue("Named", forKey: "ClientName")
        #expect(try clients.makeDelta().count == 1)
    }

    @Test func deltaIsCodable() throws {
        let clients = try makeClients()
        try clients.rows[0].setValue(0.5, forKey: "ClientDiscount")
        let delta = try clients.makeDelta()
        let decoded = try JSONDecoder().decode(Delta.self, from: JSONEncoder().encode(delta))
        #expect(decoded == delta)
    }

    @Test func acceptingResolvedChanges() throws {
        let clients = try makeClients()
        try clients.rows[0].setValue("Acme Ltd", forKey: "ClientName")
        let deleted = clients.rows[1]
        try clients.removeRow(deleted)
        let added = try clients.addNewRow(values: ["ClientName": "Hooli"])
        var delta = try clients.makeDelta()
        clients.lockRows(of: delta)
        #expect(clients.rows[0].isLocked)
        delta.changes[0].resolve()
        delta.changes[1].resolve()
        delta.changes[2].resolve(refreshing: ["ClientId": 4])
        try clients.accept(delta)
        #expect(!clients.hasChanges)
        #expect(clients.rowCount == 3)
        #expect(clients.deletedRows.isEmpty)
        #expect(clients.rows[0].originalValue(forKey: "ClientName") == "Acme Ltd")
        #expect(clients.rows[0].rowState == .unchanged)
        #expect(!clients.rows[0].isLocked)
        #expect(added["ClientId"] == 4)
        #expect(added.rowState == .unchanged)
        #expect(added.originalValue(forKey: "ClientName") == "Hooli")
        #expect(try clients.row(forPrimaryKey: 4) === added)
        #expect(try clients.row(forPrimaryKey: -1) == nil)
    }

    @Test func failedChangesStayPendingWithTheirMessage() throws {
        let clients = try makeClients()
        let good = clients.rows[0], bad = clients.rows[1]
        try good.setValue("Acme Ltd", forKey: "ClientName")
        try bad.setValue("Globex!!", forKey: "ClientName")
        var delta = try clients.makeDelta()
        clients.lockRows(of: delta)
        delta.changes[0].resolve()
        delta.changes[1].fail("names may not contain '!'")
        #expect(delta.hasErrors)
        #expect(delta.errorMessages == ["names may not contain '!'"])
        try clients.accept(delta)
        #expect(good.rowState == .unchanged)
        #expect(bad.rowState == .modified)
        #expect(bad["ClientName"] == "Globex!!", "nothing typed is lost")
        #expect(bad.failureMessage == "names may not contain '!'")
        #expect(!bad.isLocked)

        // The rebuilt delta carries only the failed change, with the right old and new values.
        let retry = try clients.makeDelta()
        #expect(retry.count == 1)
        #expect(retry.changes[0].changeId == bad.changeId)
        #expect(retry.changes[0].oldValues["ClientName"] == "Globex")
        #expect(retry.changes[0].newValues["ClientName"] == "Globex!!")
        #expect(retry.changes[0].oldValues["ClientId"] == 2)

        // Fix the value and retry: the old value is still the original.
        try bad.setValue("Globex Corp", forKey: "ClientName")
        var fixed = try clients.makeDelta()
        #expect(fixed.changes[0].oldValues["ClientName"] == "Globex")
        #expect(fixed.changes[0].newValues["ClientName"] == "Globex Corp")
        fixed.changes[0].resolve()
        try clients.accept(fixed)
        #expect(bad.failureMessage == nil)
        #expect(!clients.hasChanges)
    }

    @Test func temporaryKeysAreReplacedEverywhere() throws {
        let (orders, details) = try makeOrders()
        let order = try orders.addNewRow(values: ["Customer": "Initech"])
        #expect(order["OrderId"] == -1)
        let line = try details.addNewRow(values: ["OrderId": -1, "Quantity": 5])
        let moved = details.rows[0]
        try moved.setValue(-1, forKey: "OrderId")
        #expect(line["OrderCustomer"] == "Initech", "the lookup follows the temporary key")

        var delta = try orders.makeDelta()
        delta.changes[0].resolve(refreshing: ["OrderId": 11])
        try orders.accept(delta)

        #expect(order["OrderId"] == 11)
        #expect(line["OrderId"] == 11)
        #expect(line.rowState == .added)
        #expect(moved["OrderId"] == 11)
        #expect(moved.originalValue(forKey: "OrderId") == 10)
        #expect(line["OrderCustomer"] == "Initech")
        #expect(try details.index(forField: "OrderId").rows(for: 11).count == 2)
        let detailDelta = try details.makeDelta()
        #expect(detailDelta.changes.compactMap { $0.newValues["OrderId"] } == [11, 11])
    }

    @Test func invalidDeltasChangeNothing() throws {
        let clients = try makeClients()
        try clients.rows[0].setValue("X", forKey: "ClientName")
        var delta = try clients.makeDelta()
        delta.changes[0].resolve(refreshing: ["ClientId": "not a number"])
        let before = try clients.rows.map(snapshot)
        #expect(relataError { try clients.accept(delta) }?.code == .invalidDelta)
        var unknown = try clients.makeDelta()
        unknown.changes[0].changeId = 999
        #expect(relataError { try clients.accept(unknown) }?.code == .invalidDelta)
        var other = try clients.makeDelta()
        other.tableName = "Orders"
        #expect(relataError { try clients.accept(other) }?.code == .invalidDelta)
        #expect(try clients.rows.map(snapshot) == before)
    }

    @Test func serverRefreshedValuesAreMerged() throws {
        let clients = try makeClients()
        try clients.rows[2].setValue("Initech", forKey: "AdditionalInfo")
        var delta = try clients.makeDelta()
        delta.changes[0].resolve(refreshing: ["ClientDiscount": 0.15])
        try clients.accept(delta)
        #expect(clients.rows[2]["ClientDiscount"] == 0.15)
        #expect(clients.rows[2].rowState == .unchanged)
    }
}

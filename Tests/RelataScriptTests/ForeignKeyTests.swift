import Foundation
import Relata
import Testing
@testable import RelataScript

/// An apply fails the changes that would break a declared foreign key, as the data server's database would.
@Suite(.timeLimit(.minutes(1))) struct ForeignKeyTests {
    func adapter(clients: String? = nil) throws -> LocalDataAdapter {
        let adapter = try makeAdapter(clients: clients)
        let orders = try #require(adapter.table(named: "Orders")), details = try #require(adapter.table(named: "OrderDetails"))
        try orders.addForeignKey("ClientId", references: try #require(adapter.table(named: "Clients")), field: "ClientId")
        try details.addForeignKey("OrderId", references: orders, field: "OrderId")
        return adapter
    }

    @Test func aTableKnowsWhetherAForeignKeyInvolvesIt() throws {
        let adapter = try adapter()
        #expect(try #require(adapter.table(named: "Clients")).hasForeignKeys, "a parent")
        #expect(try #require(adapter.table(named: "Orders")).hasForeignKeys, "a child and a parent")
        #expect(try #require(adapter.table(named: "OrderDetails")).hasForeignKeys, "a child")
        #expect(try makeAdapter().table(named: "Orders")?.hasForeignKeys == false)
    }

    /// A unit whose only foreign key is between tables it does not change still checks it
    /// through the parent it changes.
    @Test func aParentChangedAloneIsStillChecked() throws {
        let adapter = try makeAdapter()
        let clients = try #require(adapter.table(named: "Clients")), orders = try #require(adapter.table(named: "Orders"))
        try orders.addForeignKey("ClientId", references: clients, field: "ClientId")
        try clients.removeRow(try #require(try clients.row(forPrimaryKey: 2)))
        #expect(try adapter.applyChanges(for: clients).failedChanges.count == 1)
    }

    @Test func aRowWhoseParentIsMissingFailsNamingBothTables() throws {
        let adapter = try adapter()
        let orders = try #require(adapter.table(named: "Orders"))
        try orders.addNewRow(values: ["ClientId": 99, "Status": "open"])
        let delta = try adapter.applyChanges(for: orders)
        #expect(delta.failedChanges.map(\.message) == ["Orders.ClientId = 99 refers to no row of Clients (ClientId)"])
        #expect(orders.rows.last?.rowState == .added, "the failed insert stays pending")
    }

    @Test func aParentThatRowsStillReferToCannotBeDeleted() throws {
        let adapter = try adapter()
        let clients = try #require(adapter.table(named: "Clients"))
        try clients.removeRow(try #require(try clients.row(forPrimaryKey: 1)))
        let delta = try adapter.applyChanges(for: clients)
        #expect(delta.failedChanges.map(\.message) == ["Clients row (ClientId=1) cannot be deleted: Orders row (OrderId=10) still refers to it (Orders.ClientId)"])
    }

    /// A parent's key that rows still refer to cannot change under them — offline as in a database.
    @Test func aParentKeyThatRowsStillReferToCannotChange() throws {
        let adapter = try adapter()
        let clients = try #require(adapter.table(named: "Clients"))
        try clients.rows[0].setValue(7, forKey: "ClientId")
        let delta = try adapter.applyChanges(for: clients)
        #expect(delta.failedChanges.map(\.message) == ["Clients row (ClientId=7) cannot change ClientId from 1: Orders row (OrderId=10) still refers to it (Orders.ClientId)"])
        // A key no row refers to any more may change.
        let orders = try #require(adapter.table(named: "Orders")), details = try #require(adapter.table(named: "OrderDetails"))
        try details.removeRow(try #require(try details.row(forPrimaryKey: 102)))
        try orders.removeRow(try #require(try orders.row(forPrimaryKey: 11)))
        try #require(try clients.row(forPrimaryKey: 2)).setValue(8, forKey: "ClientId")
        let deltas = try adapter.applyChanges(for: [clients, orders, details])
        #expect(deltas.flatMap(\.failedChanges).map(\.message) == ["Clients row (ClientId=7) cannot change ClientId from 1: Orders row (OrderId=10) still refers to it (Orders.ClientId)"])
        #expect(try clients.row(forPrimaryKey: 8)?.rowState == .unchanged)
    }

    /// An update checks only the references it changes: a child's edit whose parent the client
    /// never loaded (an empty parent table, as on a client that fetched only the children) is fine.
    @Test func anUpdateKeepingItsReferenceNeedsNoParentRow() throws {
        let adapter = try LocalDataAdapter()
        let clients = try DataTable(name: "Clients", fields: clientFields)   // not fetched: no rows
        let orders = try DataTable(name: "Orders", fields: orderFields, csv: "OrderId,ClientId,Status\n10,1,open\n")
        try adapter.addTable(clients)
        try adapter.addTable(orders)
        try orders.addForeignKey("ClientId", references: clients, field: "ClientId")
        try orders.rows[0].setValue("closed", forKey: "Status")
        #expect(try adapter.applyChanges(for: orders).failedChanges.isEmpty)
        try orders.rows[0].setValue(2, forKey: "ClientId")
        #expect(try adapter.applyChanges(for: orders).failedChanges.map(\.message) == ["Orders.ClientId = 2 refers to no row of Clients (ClientId)"])
    }

    @Test func parentsAndChildrenAddedOrDeletedTogetherAreFine() throws {
        let adapter = try adapter()
        let clients = try #require(adapter.table(named: "Clients")), orders = try #require(adapter.table(named: "Orders"))
        let details = try #require(adapter.table(named: "OrderDetails"))
        let client = try clients.addNewRow(values: ["ClientId": 3, "Name": "Initech"])
        let order = try orders.addNewRow(values: ["ClientId": client["ClientId"], "Status": "open"])
        try details.addNewRow(values: ["OrderId": order["OrderId"], "Product": "Stapler", "Quantity": 1])
        try details.removeRow(try #require(try details.row(forPrimaryKey: 102)))
        try orders.removeRow(try #require(try orders.row(forPrimaryKey: 11)))
        let deltas = try adapter.applyChanges(for: [clients, orders, details])
        #expect(deltas.allSatisfy { !$0.hasErrors }, "\(deltas.flatMap(\.failedChanges).map(\.message))")
        #expect(details.rows.last?["OrderId"] == orders.rows.last?["OrderId"])
    }

    @Test func aFailedParentFailsTheRowsThatNeedIt() throws {
        let adapter = try adapter(clients: "function beforeProcessDeltaChange(delta, change) { if (change.Name === 'Bad') fail('no Bad clients'); }")
        let clients = try #require(adapter.table(named: "Clients")), orders = try #require(adapter.table(named: "Orders"))
        try clients.addNewRow(values: ["ClientId": 3, "Name": "Bad"])
        try orders.addNewRow(values: ["ClientId": 3, "Status": "open"])
        let deltas = try adapter.applyChanges(for: [clients, orders])
        #expect(deltas.flatMap(\.failedChanges).map(\.message) == ["no Bad clients", "Orders.ClientId = 3 refers to no row of Clients (ClientId)"])
    }

    @Test func aChildAppliedWithoutItsPendingParentFails() throws {
        let adapter = try adapter()
        let clients = try #require(adapter.table(named: "Clients")), orders = try #require(adapter.table(named: "Orders"))
        try clients.addNewRow(values: ["ClientId": 3, "Name": "Pending"])
        try orders.addNewRow(values: ["ClientId": 3, "Status": "open"])
        #expect(try adapter.applyChanges(for: orders).failedChanges.count == 1)
        #expect(try adapter.applyChanges(for: [clients, orders]).hasErrors == false)
    }

    @Test func lookupsAloneDoNotConstrain() throws {
        let adapter = try makeAdapter()
        let orders = try #require(adapter.table(named: "Orders")), clients = try #require(adapter.table(named: "Clients"))
        try orders.addLookupField(name: "ClientName", sourceField: "ClientId", lookupTable: clients, lookupKeyField: "ClientId",
                                  lookupResultField: "Name")
        try orders.addNewRow(values: ["ClientId": 99, "Status": "open"])
        #expect(try adapter.applyChanges(for: orders).hasErrors == false)
    }
}

extension Array where Element == Delta {
    var hasErrors: Bool { contains { $0.hasErrors } }
}

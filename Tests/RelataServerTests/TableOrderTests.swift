import Foundation
import Relata
@testable import RelataServer
import RelataServerTestSupport
import RelataTestSupport
import Testing

/// The order a schema describes its tables in, or a client sends its deltas in, is data: it
/// never decides whether a database can be made or an apply stored.
@Suite(.timeLimit(.minutes(5))) struct TableOrderTests {
    /// Details described before their masters, with no `updateOrder`.
    static func detailsFirst() throws -> SchemaDefinition {
        try SchemaDefinition(name: "Shop", tables: [
            TableDefinition(name: "OrderDetails", fields: detailFields,
                            foreignKeys: [ForeignKeyDefinition(field: "OrderId", references: "Orders", referencedField: "OrderId")]),
            TableDefinition(name: "Orders", fields: orderFields,
                            foreignKeys: [ForeignKeyDefinition(field: "ClientId", references: "Clients", referencedField: "ClientId")]),
            TableDefinition(name: "Clients", fields: clientFields),
        ])
    }

    @Test func theDefaultUpdateOrderPutsMastersFirst() throws {
        let schema = try Self.detailsFirst()
        #expect(schema.dependencyOrder.map(\.name) == ["Clients", "Orders", "OrderDetails"])
        #expect(schema.updateOrder == ["Clients", "Orders", "OrderDetails"])
        let given = try SchemaDefinition(name: "Shop", tables: schema.tables, updateOrder: ["Orders", "Clients", "OrderDetails"])
        #expect(given.updateOrder == ["Orders", "Clients", "OrderDetails"], "an updateOrder given is kept")
        // A table referencing itself, and two referencing each other, keep their described order.
        let people = TableDefinition(name: "People", fields: [FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("Boss", .integer)],
                                     foreignKeys: [ForeignKeyDefinition(field: "Boss", references: "People", referencedField: "Id")])
        let a = TableDefinition(name: "A", fields: [FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("B", .integer)],
                                foreignKeys: [ForeignKeyDefinition(field: "B", references: "B", referencedField: "Id")])
        let b = TableDefinition(name: "B", fields: [FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("A", .integer)],
                                foreignKeys: [ForeignKeyDefinition(field: "A", references: "A", referencedField: "Id")])
        #expect(try SchemaDefinition(name: "Cycles", tables: [a, people, b]).dependencyOrder.map(\.name) == ["People", "A", "B"])
    }

    /// A fresh database is made and seeded for such a schema, and a new client with a new
    /// order and line — deltas sent details first — is stored with its keys fixed up.
    @Test(arguments: StorageBackend.allCases)
    func aSchemaListingDetailsBeforeMastersIsServed(backend: StorageBackend) async throws {
        let database = try DataServiceTests.Database(schema: Self.detailsFirst(), backend: backend)
        let (clients, orders, details) = try DataServiceTests.clientTables()
        try clients.addNewRow(values: ["ClientId": 3, "Name": "Initech", "CreditLimit": 500])
        let order = try orders.addNewRow(values: ["ClientId": 3, "Status": "open"])
        try details.addNewRow(values: ["OrderId": order["OrderId"], "Product": "Bolt", "Quantity": 1])
        let processed = try await database.service.updateData([details.makeDelta(), orders.makeDelta(), clients.makeDelta()], session: Session())
        #expect(processed.flatMap(\.changes).allSatisfy { $0.status == .resolved }, "\(processed.flatMap(\.changes).compactMap(\.message))")

        let stored = try await database.service.getData([DataRequest(table: "Orders"), DataRequest(table: "OrderDetails")], session: Session())
        let newOrder = try #require(stored[0].rows.last)
        #expect(newOrder[1] == 3 && newOrder[0] != order["OrderId"], "the order got a real key")
        #expect(stored[1].rows.last?[1] == newOrder[0], "the line refers to the order's real key")
    }
}

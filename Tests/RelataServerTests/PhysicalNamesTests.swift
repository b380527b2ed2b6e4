import Foundation
import GRDB
import Relata
import RelataScript
@testable import RelataServer
import RelataTestSupport
import Testing

/// A schema may rename: logical table and field names for clients and rules, others in the database.
@Suite struct PhysicalNamesTests {
    static func schema() throws -> SchemaDefinition {
        let base = try DataServiceTests.schema()
        var tables = base.tables
        tables[1].storedName = "tbl_orders"
        tables[1].columns = ["Status": "order_status", "ClientId": "client_ref"]
        tables[2].columns = ["OrderId": "order_ref"]
        return try SchemaDefinition(name: base.name, tables: tables, updateOrder: base.updateOrder)
    }

    @Test func theDatabaseUsesStoredNamesAndEverythingElseTheSchemasNames() async throws {
        let database = try DataServiceTests.Database(schema: Self.schema())
        let storage = database.service.storage
        let columns = try storage.read { db in try db.columns(in: "tbl_orders").map(\.name) }
        #expect(columns == ["OrderId", "client_ref", "order_status"])
        #expect(try storage.read { db in try db.tableExists("Orders") } == false)

        let orders = try await database.service.getData([DataRequest(table: "Orders", where: "Status = 'open' AND ClientId = 2")], session: Session())
        #expect(orders[0].rows == [[11, 2, "open"]])

        let (_, client, details) = try DataServiceTests.clientTables()
        let order = try client.addNewRow(values: ["ClientId": 1, "Status": "new"])
        try details.addNewRow(values: ["OrderId": order["OrderId"], "Product": "Nut", "Quantity": 1, "UnitPrice": 0.1])
        try client.rows[1].setValue("paid", forKey: "Status")
        let processed = try await database.service.updateData([client.makeDelta(), details.makeDelta()], session: Session())
        #expect(processed.flatMap(\.changes).allSatisfy { $0.status == .resolved }, "\(processed.flatMap(\.changes).compactMap(\.message))")
        let stored = try storage.read { db in
            try Row.fetchAll(db, sql: "SELECT order_status FROM tbl_orders ORDER BY OrderId").map { $0["order_status"] as String? }
        }
        #expect(stored == ["open", "paid", "new"])
        #expect(try storage.read { db in try Int.fetchOne(db, sql: "SELECT order_ref FROM OrderDetails ORDER BY DetailId DESC LIMIT 1") } == 12)
    }

    @Test func aMappingOfAnUnknownFieldIsRefused() throws {
        var tables = try Self.schema().tables
        tables[1].columns["Stauts"] = "x"
        #expect(throws: RelataError.self) { try SchemaDefinition(name: "S", tables: tables) }
    }
}

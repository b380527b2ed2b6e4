import Foundation
import Relata
import RelataScript
@testable import RelataServer
import RelataServerTestSupport
import RelataTestSupport
import Testing

/// A schema may rename: logical table and field names for clients and rules, others in the database.
@Suite(.timeLimit(.minutes(10))) struct PhysicalNamesTests {
    static func schema() throws -> SchemaDefinition {
        let base = try DataServiceTests.schema()
        var tables = base.tables
        tables[1].storedName = "tbl_orders"
        tables[1].columns = ["Status": "order_status", "ClientId": "client_ref"]
        tables[2].columns = ["OrderId": "order_ref"]
        return try SchemaDefinition(name: base.name, tables: tables, updateOrder: base.updateOrder)
    }

    @Test(arguments: StorageBackend.allCases)
    func theDatabaseUsesStoredNamesAndEverythingElseTheSchemasNames(backend: StorageBackend) async throws {
        let database = try DataServiceTests.Database(schema: Self.schema(), backend: backend)
        let storage = database.service.storage
        let name = FieldDefinition("name", .string)
        let columns = try storage.read { connection in
            try connection.rows(backend.columnNamesQuery(table: "tbl_orders"), [], reading: [name]).map { $0[0] }
        }
        #expect(columns == ["OrderId", "client_ref", "order_status"])
        let tables = try storage.read { connection in
            try connection.rows(backend.tableNamesQuery, [], reading: [name]).map { $0[0] }
        }
        #expect(tables.contains("tbl_orders") && !tables.contains("Orders"))

        let orders = try await database.service.getData([DataRequest(table: "Orders", where: "Status = 'open' AND ClientId = 2")], session: Session())
        #expect(orders[0].rows == [[11, 2, "open"]])

        let (_, client, details) = try DataServiceTests.clientTables()
        let order = try client.addNewRow(values: ["ClientId": 1, "Status": "new"])
        try details.addNewRow(values: ["OrderId": order["OrderId"], "Product": "Nut", "Quantity": 1, "UnitPrice": 0.1])
        try client.rows[1].setValue("paid", forKey: "Status")
        let processed = try await database.service.updateData([client.makeDelta(), details.makeDelta()], session: Session())
        #expect(processed.flatMap(\.changes).allSatisfy { $0.status == .resolved }, "\(processed.flatMap(\.changes).compactMap(\.message))")
        let stored = try storage.read { connection in
            try connection.rows(#"SELECT "order_status" FROM "tbl_orders" ORDER BY "OrderId""#, [], reading: [name]).map { $0[0] }
        }
        #expect(stored == ["open", "paid", "new"])
        let key = FieldDefinition("order_ref", .integer)
        #expect(try storage.read { connection in
            try connection.rows(#"SELECT "order_ref" FROM "OrderDetails" ORDER BY "DetailId" DESC LIMIT 1"#, [], reading: [key]).first?.first
        } == 12)
    }

    @Test func aMappingOfAnUnknownFieldIsRefused() throws {
        var tables = try Self.schema().tables
        tables[1].columns["Stauts"] = "x"
        #expect(throws: RelataError.self) { try SchemaDefinition(name: "S", tables: tables) }
    }
}

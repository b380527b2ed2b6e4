import Foundation
import Relata
import Testing
import RelataScript
@testable import RelataTools
import RelataTestSupport

/// Schema files: PCTrade loads whole; broken schemas say where and what.
@Suite struct SchemaTests {
    static let pcTrade = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Examples/PCTrade/PCTrade.schema.json")

    @Test func pcTradeLoadsWithDataRulesAndRelationships() throws {
        let schema = try Schema(contentsOf: Self.pcTrade)
        let adapter = try schema.makeAdapter()
        #expect(adapter.tables.map(\.name) == ["Clients", "Providers", "Products", "Orders", "OrderDetails"])
        #expect(adapter.tables.map(\.rowCount) == [40, 12, 80, 150, 434])
        #expect(adapter.updateOrder == ["Clients", "Providers", "Products", "Orders", "OrderDetails"])
        #expect(adapter.updateRule(forTable: "Orders").onFailure == .rollbackAll)
        let line = try #require(adapter.table(named: "OrderDetails")?.rows.first)
        let product = try #require(try adapter.table(named: "Products")?.row(forPrimaryKey: [line["ProductId"]]))
        #expect(line["ProductName"] == product["ProductName"], "the lookup field reads the product's name")
        #expect(try line.value(forKey: "LineTotal").doubleValue == ((line["Quantity"].doubleValue ?? 0) * (line["UnitPrice"].doubleValue ?? 0) * (1 - (line["Discount"].doubleValue ?? 0)) * 100).rounded() / 100)
        #expect(schema.scriptFiles.map(\.lastPathComponent) == ["schema.js", "Clients.js", "Products.js", "Orders.js", "Orders.server.js", "OrderDetails.js"])
        #expect(try schema.testFiles().map(\.lastPathComponent) == ["Clients.test.js", "OrderDetails.test.js", "Orders.test.js", "Products.test.js"])
        #expect(adapter.table(named: "Clients")?.field(named: "CreditLimit")?.defaultValue == .decimal(1000), "plain JSON defaults take the field's type")
    }

    @Test func newKeysBecomeRealAtApplyAndFollowIntoDetails() throws {
        let adapter = try Schema(contentsOf: Self.pcTrade).makeAdapter()
        let orders = adapter.table(named: "Orders")!, details = adapter.table(named: "OrderDetails")!
        let order = try orders.addNewRow(values: ["ClientId": 5])
        let line = try details.addNewRow(values: ["OrderId": order["OrderId"], "ProductId": 10, "Quantity": 1])
        #expect(order["OrderId"] == -1)
        try adapter.applyChanges(for: [details, orders])
        #expect(order["OrderId"] == 151)
        #expect(line["OrderId"] == 151, "the detail follows its order's new key")
        #expect(line["DetailId"] == 435)
    }

    private func schemaError(_ json: String, files: [String: String] = [:]) throws -> RelataError? {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("relata-schema-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for (name, text) in files { try Data(text.utf8).write(to: folder.appendingPathComponent(name)) }
        let url = folder.appendingPathComponent("s.schema.json")
        try Data(json.utf8).write(to: url)
        do {
            _ = try Schema(contentsOf: url).makeAdapter()
            return nil
        } catch let error as RelataError {
            return error
        }
    }

    @Test func brokenSchemasSayWhereAndWhat() throws {
        let unknownType = try schemaError(#"{"name": "S", "tables": [{"name": "T", "fields": [{"name": "A", "type": "strng"}]}]}"#)
        #expect(unknownType?.code == .invalidSchema)
        #expect(unknownType?.description.contains("tables[0].fields[0].type") == true)
        #expect(unknownType?.description.contains("s.schema.json") == true)

        let missing = try schemaError(#"{"name": "S", "tables": [{"fields": []}]}"#)
        #expect(missing?.description.contains("tables[0]: 'name' is missing") == true)

        let order = try schemaError(#"{"name": "S", "updateOrder": ["Nope"], "tables": [{"name": "T", "fields": []}]}"#)
        #expect(order?.description.contains("updateOrder names the table 'Nope'") == true)

        let noFile = try schemaError(#"{"name": "S", "tables": [{"name": "T", "data": "T.csv", "fields": []}]}"#)
        #expect(noFile?.description.contains("'T.csv' does not exist") == true)

        let lookup = try schemaError(#"{"name": "S", "tables": [{"name": "T", "fields": [{"name": "X", "type": "integer"}], "lookupFields": [{"name": "L", "sourceField": "Nope", "lookupTable": "T", "lookupKeyField": "X", "lookupResultField": "X"}]}]}"#)
        #expect(lookup?.description.contains("s.schema.json: table T has no field 'Nope'") == true)

        let notJSON = try schemaError("{ name: S }")
        #expect(notJSON?.description.contains("not valid JSON") == true)

        let badCell = try schemaError(#"{"name": "S", "tables": [{"name": "T", "data": "T.csv", "fields": [{"name": "N", "type": "integer"}]}]}"#,
                                      files: ["T.csv": "N\n1\nlots\n"])
        #expect(badCell?.description.contains("T.csv, line 3, column 1") == true)
        #expect(badCell?.field == "N")
    }
}

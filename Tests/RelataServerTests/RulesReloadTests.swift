import Foundation
import Relata
import RelataScript
@testable import RelataServer
import RelataServerTestSupport
import RelataTestSupport
import Testing

/// Rules change while the server runs; tables do not.
@Suite(.timeLimit(.minutes(10))) struct RulesReloadTests {
    static func schema(detailRule: String) throws -> SchemaDefinition {
        let base = try DataServiceTests.schema()
        var tables = base.tables
        tables[2].script = RuleScript("function beforePost(row) { \(detailRule) }", fileName: "OrderDetails.js")
        return try SchemaDefinition(name: base.name, tables: tables, updateOrder: base.updateOrder)
    }

    /// A change of one detail row's quantity, as a client that read the seeded data sends it.
    static func quantity(_ value: Int64, row: Int = 0, on service: DataService) async throws -> DeltaChange {
        let details = try DataServiceTests.clientTables().details
        try details.rows[row].setValue(.integer(value), forKey: "Quantity")
        return try await service.updateData([details.makeDelta()], session: Session())[0].changes[0]
    }

    @Test(arguments: StorageBackend.allCases)
    func newRulesApplyToTheNextRequest(backend: StorageBackend) async throws {
        let database = try DataServiceTests.Database(schema: Self.schema(detailRule: "if (row.Quantity > 100) fail('at most 100');"), backend: backend)
        let service = database.service
        #expect(try await Self.quantity(50, on: service).status == .resolved)
        let before = service.schema.version
        #expect(try service.reloadRules(from: Self.schema(detailRule: "if (row.Quantity > 10) fail('at most 10 now');")))
        #expect(service.schema.version != before)
        #expect(try await Self.quantity(60, row: 1, on: service).message == "at most 10 now")
        #expect(try !service.reloadRules(from: service.schema), "the same version is not reloaded")
    }

    @Test func aBrokenScriptOrChangedTablesLeaveTheRulesAsTheyWere() async throws {
        let database = try DataServiceTests.Database(schema: Self.schema(detailRule: "if (row.Quantity > 100) fail('at most 100');"))
        let service = database.service
        let version = service.schema.version
        #expect(throws: ScriptError.self) { try service.reloadRules(from: Self.schema(detailRule: "if (")) }
        var grown = try Self.schema(detailRule: "")
        grown.tables[0].fields.append(FieldDefinition("Email", .string, size: 80))
        #expect(throws: RelataError.self) { try service.reloadRules(from: grown) }
        #expect(service.schema.version == version)
        #expect(try await Self.quantity(500, on: service).message == "at most 100")
    }
}

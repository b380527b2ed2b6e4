import Foundation
import Relata
import RelataTestSupport
import RelataTools
import Testing

/// `relata briefcase show` and `export`, on a briefcase `relata run` saved with pending changes.
@Suite(.serialized, .timeLimit(.minutes(10))) struct BriefcaseCommandTests {
    let folder: TemporaryFolder
    let briefcase: String

    init() async throws {
        folder = try TemporaryFolder()
        briefcase = folder.url.appendingPathComponent("pctrade.briefcase").path
        let scenario = RelataProcess.packageRoot.appendingPathComponent("Examples/PCTrade/edits/scenario.json").path
        let run = try await RelataProcess.run(["run", RelataProcess.pcTradeSchema, "--edits", scenario, "--no-apply", "--save-briefcase", briefcase])
        try #require(run.status == 1, "the scenario refuses some edits; \(run.errorOutput)")
    }

    /// A client's briefcase keeps its schema, its fetched tables and an unanswered batch as
    /// properties: `show` sums them up instead of printing their JSON.
    @Test func showSumsUpAClientsSchemaAndLongProperties() async throws {
        let schema = try String(decoding: JSONEncoder().encode(Schema(contentsOf: URL(fileURLWithPath: RelataProcess.pcTradeSchema)).definition().sharedWithClients),
                                as: UTF8.self)
        let client = Briefcase()
        client.addTable(try DataTable(name: "Notes", fields: [FieldDefinition("Id", .integer, primaryKey: true)]))
        client.properties = ["Relata.Schema": schema, "Relata.FetchedTables": "Clients\nOrders",
                             "Relata.UnansweredApply": #"{"apply": {"id": "A-1", "madeAt": 1800000000}, "deltas": [{"tableName": "Notes", "keyFields": ["Id"], "loggedFields": ["Id"], "changes": [{"changeId": 1, "type": "insert", "status": "pending", "oldValues": {}, "newValues": {"Id": {"integer": 1}}, "refreshedValues": {}}]}]}"#,
                             "Note": String(repeating: "x", count: 300)]
        let file = folder.url.appendingPathComponent("client.briefcase")
        try client.save(to: file)
        let result = try await RelataProcess.run(["briefcase", "show", file.path])
        #expect(result.status == 0, "\(result.errorOutput)")
        #expect(result.output.contains("  Relata.Schema = the schema PCTrade: 5 tables (Clients, Providers, Products, Orders, OrderDetails), 5 rule scripts"),
                "\(result.output)")
        #expect(result.output.contains("  Relata.FetchedTables = Clients, Orders"))
        #expect(result.output.contains("  Relata.UnansweredApply = a batch sent without an answer: 1 change (apply id A-1); the next apply sends it again first"))
        #expect(result.output.contains("  Note = " + String(repeating: "x", count: 100) + "… (300 characters)"))
        #expect(!result.output.contains("\"tables\""), "no JSON dumped")
    }

    @Test func showListsTablesRowsAndPendingChanges() async throws {
        let result = try await RelataProcess.run(["briefcase", "show", briefcase])
        #expect(result.status == 0)
        #expect(result.output.contains("pctrade.briefcase (file briefcase)"))
        #expect(result.output.contains("  Schema = PCTrade"))
        #expect(result.output.contains("  Clients       41 rows, 2 pending changes (1 added, 1 modified)"))
        #expect(result.output.contains("  Products      79 rows, 1 pending change (1 deleted)"))
        #expect(result.output.contains("  Providers     12 rows, no pending changes"))
        let json = try await RelataProcess.run(["briefcase", "show", briefcase, "--json"])
        let summary = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
        let tables = summary?["tables"] as? [[String: Any]]
        #expect(tables?.first { $0["name"] as? String == "OrderDetails" }?["pending"] as? [String: Int] == ["added": 2])
    }

    @Test func exportPrintsRowsOrPendingChanges() async throws {
        let rows = try await RelataProcess.run(["briefcase", "export", briefcase, "--table", "orders"])
        #expect(rows.status == 0)
        let objects = try JSONSerialization.jsonObject(with: Data(rows.output.utf8)) as? [[String: Any]]
        #expect(objects?.count == 151)
        #expect(objects?.last?["OrderId"] as? Int == -1, "the new order keeps its temporary key")
        let changes = try await RelataProcess.run(["briefcase", "export", briefcase, "--table", "Orders", "--changes"])
        let delta = try JSONSerialization.jsonObject(with: Data(changes.output.utf8)) as? [String: Any]
        #expect((delta?["changes"] as? [[String: Any]])?.first?["type"] as? String == "insert")
    }

    @Test func badBriefcasesAreClearErrors() async throws {
        let foreign = try folder.write("foreign.briefcase", "hello")
        let result = try await RelataProcess.run(["briefcase", "show", foreign])
        #expect(result.status == 2)
        #expect(result.errorOutput.contains("not a Relata briefcase"))
        let table = try await RelataProcess.run(["briefcase", "export", briefcase, "--table", "Nope"])
        #expect(table.status == 2)
        #expect(table.errorOutput.contains("the briefcase has no such table (tables: Clients, Providers, Products, Orders, OrderDetails)"))
    }
}

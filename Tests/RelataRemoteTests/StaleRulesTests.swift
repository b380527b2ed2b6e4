import Foundation
import Relata
import RelataRemote
import Testing

/// The server's rules change while a client holds changes validated with the old ones.
@Suite struct StaleRulesTests {
    @Test func aStaleClientIsToldTakesTheNewRulesAndValidatesAgain() async throws {
        let server = try PCTradeServer()
        try await server.serve { url in
            let adapter = demoAdapter(url)
            let clients = try await adapter.getDataTable("Clients")
            let oldVersion = adapter.rulesVersion
            try clients.rows[0].setValue("Forbidden Ltd", forKey: "ClientName")   // the old rules let it pass
            try clients.rows[1].setValue("Fine Ltd", forKey: "ClientName")

            var schema = server.service.storage.schema
            let index = try #require(schema.tables.firstIndex { $0.name == "Clients" })
            schema.tables[index].script?.source += "\nfunction beforeUpdate(row, old) { if (row.ClientName === 'Forbidden Ltd') fail('that name is taken'); }\n"
            #expect(try server.service.reloadRules(from: schema))

            let id = try #require(clients.rows[0]["ClientId"].integerValue)
            let delta = try await adapter.applyChanges(for: clients)
            #expect(adapter.rulesVersion != oldVersion, "the new rules were downloaded")
            #expect(delta.changes.map(\.status) == [.failed, .resolved])
            #expect(delta.changes[0].message == "that name is taken")
            #expect(clients.rows[0].failureMessage == "that name is taken")
            #expect(clients.rows[0]["ClientName"] == "Forbidden Ltd", "nothing typed is lost")
            #expect(try server.storedRows("Clients", key: "ClientId")[id]?["ClientName"] != "Forbidden Ltd")

            // From now on the new rule runs as the user edits.
            #expect(throws: (any Error).self) { try clients.rows[2].setValue("Forbidden Ltd", forKey: "ClientName") }
        }
    }
}

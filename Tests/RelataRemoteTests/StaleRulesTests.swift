import Foundation
import Relata
import RelataRemote
import Testing

/// The server's rules change while a client holds changes validated with the old ones.
@Suite(.timeLimit(.minutes(10))) struct StaleRulesTests {
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

    @Test func aScriptTheServerDroppedStopsRunningOnTheClient() async throws {
        let server = try PCTradeServer()
        try await server.serve { url in
            let adapter = demoAdapter(url)
            let clients = try await adapter.getDataTable("Clients")
            let refusal = "a discount of 50% is outside 0–30%"
            let error = try #require(throws: (any Error).self) { try clients.rows[0].setValue(0.5, forKey: "ClientDiscount") }
            #expect("\(error)".contains(refusal), "the downloaded Clients.js runs as the user edits")

            var schema = server.service.storage.schema
            let index = try #require(schema.tables.firstIndex { $0.name == "Clients" })
            schema.tables[index].script = nil
            #expect(try server.service.reloadRules(from: schema))

            try clients.rows[1].setValue("Renamed Ltd", forKey: "ClientName")
            let delta = try await adapter.applyChanges(for: clients)   // told the rules are stale: takes the new ones
            #expect(delta.changes.map(\.status) == [.resolved])
            try clients.rows[0].setValue(0.5, forKey: "ClientDiscount")   // no Clients.js any more, here or there
            #expect(try await adapter.applyChanges(for: clients).changes.map(\.status) == [.resolved])
        }
    }

    @Test func aChangedCalculatedFieldNeedsANewAdapterAndLosesNothing() async throws {
        let server = try PCTradeServer()
        try await server.serve { url in
            let adapter = demoAdapter(url)
            let clients = try await adapter.getDataTable("Clients")
            try clients.rows[0].setValue("Kept Ltd", forKey: "ClientName")

            var schema = server.service.storage.schema
            let index = try #require(schema.tables.firstIndex { $0.name == "OrderDetails" })
            schema.tables[index].calculatedFields = [CalculatedFieldDefinition(name: "LineTotal", type: .currency,
                                                                               function: "function (row) { return row.Quantity * row.UnitPrice; }")]
            #expect(try server.service.reloadRules(from: schema))

            let error = try await #require(throws: RemoteError.self) { try await adapter.applyChanges(for: clients) }
            #expect(error.code == RemoteError.schemaChangedCode)
            #expect(error.message.contains("OrderDetails") && error.message.contains("create a new adapter"))
            #expect(clients.rows[0]["ClientName"] == "Kept Ltd" && clients.rows[0].rowState == .modified, "the change stays pending")
            #expect(!clients.rows[0].isLocked)

            let fresh = demoAdapter(url)
            let details = try await fresh.getDataTable("OrderDetails")
            let row = try #require(details.rows.first)
            let expected = (row["Quantity"].doubleValue ?? 0) * (row["UnitPrice"].doubleValue ?? 0)
            #expect(try row.value(forKey: "LineTotal").doubleValue == expected, "a new adapter takes the new definition")
        }
    }
}

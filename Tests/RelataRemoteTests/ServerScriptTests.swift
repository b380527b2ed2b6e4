import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Relata
import RelataRemote
import RelataScript
import RelataServerTestSupport
import RelataTools
import Testing

/// Server-only scripts (`serverScript`): PCTrade's `Orders.server.js` stores ship addresses in
/// the warehouse's format. It runs where the data is kept — on the server, and offline in an
/// adapter made from the schema file — after the shared script; no client ever receives its text,
/// and a client ends with what it stored.
@Suite(.timeLimit(.minutes(10))) struct ServerScriptTests {
    static let serverOnlyText = "warehouse's format"

    /// The raw answer of a POST, as text.
    static func post(_ url: URL, _ path: String, _ body: String, token: String? = nil) async throws -> (Int, String) {
        var request = URLRequest(url: url.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.httpBody = Data(body.utf8)
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    @Test func noClientReceivesAServerOnlyScript() async throws {
        let server = try PCTradeServer()
        let full = server.service.storage.schema
        #expect(full.table(named: "Orders")?.serverScript?.source.contains(Self.serverOnlyText) == true, "the server has it")
        try await server.serve { url in
            let (_, login) = try await Self.post(url, "v2/LoginService/Login", #"{"loginString": "User=clerk;Password=clerk"}"#)
            let token = try #require(try JSONSerialization.jsonObject(with: Data(login.utf8)) as? [String: Any])["token"] as? String
            let (status, schema) = try await Self.post(url, "v2/DataService.PCTrade/GetSchema", "{}", token: token)
            #expect(status == 200)
            let (dataStatus, data) = try await Self.post(url, "v2/DataService.PCTrade/GetData",
                                                        #"{"requests": [{"table": "Orders", "maxRecords": 1}], "includeSchema": true}"#, token: token)
            #expect(dataStatus == 200)
            for (what, text) in [("GetSchema", schema), ("GetData with the schema", data)] {
                #expect(text.contains("Orders.js"), "\(what) sends the shared scripts")
                for secret in [Self.serverOnlyText, "Orders.server.js", "serverScript"] {
                    #expect(!text.contains(secret), "\(what) gives away \(secret)")
                }
            }
            // The version is the whole schema's: a change to a server script makes clients validate again.
            #expect(schema.contains(full.version))
            #expect(full.sharedWithClients.version != full.version)
        }
    }

    @Test func theServerRunsItAfterTheSharedScriptAndTheClientEndsWithWhatItStored() async throws {
        let server = try PCTradeServer()
        try await server.serve { url in
            let adapter = demoAdapter(url)
            let orders = try await adapter.getDataTable("Orders")
            let details = try await adapter.getDataTable("OrderDetails")
            let order = try orders.addNewRow(values: ["ClientId": 9, "ShipAddress": "  12   Dock\tSt "])
            try details.addNewRow(values: ["OrderId": order["OrderId"], "ProductId": 2])
            let open = try #require(orders.rows.first { $0["OrderId"] == 145 })
            try open.setValue("5  Quay Road  ", forKey: "ShipAddress")
            #expect(order["ShipAddress"] == "  12   Dock\tSt ", "the client does not have the server's script")

            let deltas = try await adapter.applyChanges(for: [orders, details])
            #expect(deltas.flatMap(\.changes).allSatisfy { $0.status == .resolved }, "\(deltas.flatMap(\.changes).compactMap(\.message))")
            #expect(order["ShipAddress"] == "12 Dock St", "the stored address came back with the answer")
            #expect(open["ShipAddress"] == "5 Quay Road")
            let stored = try server.storedRows("Orders", key: "OrderId")
            #expect(stored[145]?["ShipAddress"] == "5 Quay Road")
            #expect(stored[try #require(order["OrderId"].integerValue)]?["ShipAddress"] == "12 Dock St")
        }
    }

    /// Commands and `afterLogin` run only on the server: the schema-wide server script may hold
    /// them, and clients never see how they work.
    @Test func aCommandAndAfterLoginMayLiveInTheServerScript() async throws {
        let server = try PCTradeServer { schema in
            schema.serverScript = RuleScript("""
                function afterLogin(login) { login.values.Discount = 'secret tier ' + login.user.length; }
                function restock(parameters) {
                    lda.update('Products', parameters.productId, { UnitsInStock: 100 });
                    return 'restocked';
                }
                """, fileName: "schema.server.js")
            schema.commands = [CommandDefinition(name: "Restock", function: "restock", enabled: true, roles: ["Manager"])]
        }
        try await server.serve { url in
            let adapter = demoAdapter(url)
            let (result, _) = try await adapter.executeCommand("Restock", parameters: ["productId": 2])
            #expect(result == "restocked")
            #expect(try server.storedRows("Products", key: "ProductId")[2]?["UnitsInStock"] == 100)
            #expect(adapter.session?.values["Discount"] == "secret tier 4")
            let schema = try await adapter.loadSchema()
            #expect(schema.serverScript == nil && schema.commands.map(\.name) == ["Restock"])
        }
    }

    /// Offline, the adapter made from the schema file keeps the data: it runs the server script
    /// too, so `relata run` predicts what a server stores.
    @Test func anAdapterMadeFromTheSchemaFileRunsIt() throws {
        var quiet = Logger(label: "relata.test")
        quiet.logLevel = .critical
        let adapter = try Schema(contentsOf: PCTradeServer.schemaFile).makeAdapter(logger: quiet)
        let orders = try #require(adapter.table(named: "Orders"))
        let open = try #require(orders.rows.first { $0["OrderId"] == 145 })
        try open.setValue(" 7   Pier Lane", forKey: "ShipAddress")
        #expect(open["ShipAddress"] == "7 Pier Lane", "it runs as the row is posted, after Orders.js")
    }
}

import Foundation
import Relata
import RelataRemote
import Testing

/// Commands the server's schema declares, run from the client.
@Suite(.timeLimit(.minutes(10))) struct RemoteCommandTests {
    static func server() throws -> PCTradeServer {
        try PCTradeServer { schema in
            schema.script?.source += """

                function discontinue(parameters) {
                    const product = lda.select('Products', parameters.productId);
                    if (product === null) fail('there is no product ' + parameters.productId);
                    lda.update('Products', product, { Discontinued: true });
                    return product.ProductName + ' is discontinued';
                }
                """
            schema.commands = [CommandDefinition(name: "Discontinue", function: "discontinue", enabled: true, roles: ["Manager"])]
        }
    }

    @Test func aCommandRunsOnTheServerAndSaysWhatItChanged() async throws {
        let server = try Self.server()
        try await server.serve { url in
            let adapter = demoAdapter(url)
            let products = try await adapter.getDataTable("Products")
            let name = try #require(products.rows.first { $0["ProductId"] == 2 }?["ProductName"].stringValue)
            let (result, changes) = try await adapter.executeCommand("Discontinue", parameters: ["productId": 2])
            #expect(result == .string("\(name) is discontinued"))
            #expect(changes.map(\.tableName) == ["Products"])
            #expect(changes.flatMap(\.changes).map(\.status) == [.resolved])
            #expect(try server.storedRows("Products", key: "ProductId")[2]?["Discontinued"] == true)
            #expect(products.rows.first { $0["ProductId"] == 2 }?["Discontinued"] == false, "the adapter's table waits for a refresh")
            try await adapter.refresh(products)
            #expect(products.rows.first { $0["ProductId"] == 2 }?["Discontinued"] == true)

            let refused = try await #require(throws: RemoteError.self) {
                try await adapter.executeCommand("Discontinue", parameters: ["productId": 9999])
            }
            #expect(refused.kind == .permanent && refused.message.contains("there is no product 9999"))
            let unknown = try await #require(throws: RemoteError.self) { try await adapter.executeCommand("DropTables") }
            #expect(unknown.code == "unknownCommand")

            let clerk = RemoteDataAdapter(targetURL: url, dataService: "DataService.PCTrade")
            clerk.credentials = RemoteCredentials(user: "clerk", password: "clerk")
            let denied = try await #require(throws: RemoteError.self) {
                try await clerk.executeCommand("Discontinue", parameters: ["productId": 3])
            }
            #expect(denied.code == "permissionDenied")
            #expect(try server.storedRows("Products", key: "ProductId")[3]?["Discontinued"] == false)
        }
    }
}

import Foundation
import Relata
@testable import RelataServer
import RelataServerTestSupport
import RelataTestSupport
import Testing

/// A table closed to a role stays closed however a request reaches it: a where expression on a
/// lookup field into it (a search on it recovers its values one question at a time), or on a
/// calculated field whose function reads it through `lda`, is refused by name — over a socket.
@Suite(.timeLimit(.minutes(10))) struct LookupLeakTests {
    static func services(_ backend: StorageBackend) throws -> (ServerServices, DataServiceTests.Database) {
        let base = try DataServiceTests.schema()
        var tables = base.tables
        let orders = try #require(tables.firstIndex { $0.name == "Orders" })
        tables[orders].lookupFields = [LookupFieldDefinition(name: "ClientName", sourceField: "ClientId", lookupTable: "Clients",
                                                             lookupKeyField: "ClientId", lookupResultField: "Name")]
        tables[orders].calculatedFields = [CalculatedFieldDefinition(name: "ClientCredit", type: .currency, function: "clientCredit")]
        tables[orders].script = RuleScript("""
            function clientCredit(row) {
                const client = lda.select('Clients', row.ClientId);
                return client === null ? null : client.CreditLimit;
            }
            """, fileName: "Orders.js")
        let schema = try SchemaDefinition(name: base.name, tables: tables, updateOrder: base.updateOrder)
        let database = try DataServiceTests.Database(schema: schema, backend: backend)
        let permissions = try TablePermissions(["Clients": ["read": ["Sales"]], "*": ["read": ["Sales", "Clerk"]]])
        let service = try DataService(storage: database.service.storage, permissions: permissions, runtimes: 1)
        let hash = ServerUser.hash(password: "pw", cost: 4)
        let users = [ServerUser(name: "ann", passwordHash: hash, roles: ["Sales"]), ServerUser(name: "clerk", passwordHash: hash, roles: ["Clerk"])]
        return (try ServerServices(dataServices: [service], login: LoginService(users: users, sessions: try backend.makeSessions(in: database.database))), database)
    }

    static func getOrders(_ client: LiveClient, as user: String, where expression: String) async throws -> (Int, Data) {
        let (_, data) = try await HTTPProtocolTests.post(client, "/v2/LoginService/Login", ProtocolMessages.LoginRequest(loginString: "User=\(user);Password=pw"))
        let token = try JSONDecoder().decode(ProtocolMessages.LoginAnswer.self, from: data).token
        return try await HTTPProtocolTests.post(client, "/v2/DataService/GetData",
                                                ProtocolMessages.GetDataRequest(requests: [DataRequest(table: "Orders", where: expression)]), token: token)
    }

    @Test(arguments: StorageBackend.allCases)
    func aFilterOnALookupIntoAClosedTableIsRefusedByName(backend: StorageBackend) async throws {
        let (services, database) = try Self.services(backend)
        defer { withExtendedLifetime(database) {} }
        try await withLiveServer(services) { client in
            let (status, body) = try await Self.getOrders(client, as: "clerk", where: "ClientName LIKE 'A%'")
            #expect(status == 403)
            let error = try HTTPProtocolTests.error(body)
            #expect(error.code == "permissionDenied")
            #expect(error.message == "the where expression names ClientName, a lookup into Clients: read on Clients is not allowed for roles [Clerk]; roles that may: [Sales]")
            // The same filter for a role that may read Clients answers.
            let (allowed, rows) = try await Self.getOrders(client, as: "ann", where: "ClientName LIKE 'A%'")
            #expect(allowed == 200, "\(String(decoding: rows, as: UTF8.self))")
            // Orders alone stay open to the clerk.
            let (plain, _) = try await Self.getOrders(client, as: "clerk", where: "Status = 'open'")
            #expect(plain == 200)
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func aFilterOnACalculatedFieldReadingAClosedTableIsRefused(backend: StorageBackend) async throws {
        let (services, database) = try Self.services(backend)
        defer { withExtendedLifetime(database) {} }
        try await withLiveServer(services) { client in
            let (status, body) = try await Self.getOrders(client, as: "clerk", where: "ClientCredit > 100")
            let text = String(decoding: body, as: UTF8.self)
            #expect(status != 200, "\(text)")
            #expect(text.contains("read on Clients is not allowed for roles [Clerk]; roles that may: [Sales]"), "\(text)")
            let (allowed, rows) = try await Self.getOrders(client, as: "ann", where: "ClientCredit > 100")
            #expect(allowed == 200, "\(String(decoding: rows, as: UTF8.self))")
        }
    }
}

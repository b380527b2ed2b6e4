import Foundation
import Hummingbird
import Relata
import RelataScript
@testable import RelataServer
import RelataServerTestSupport
import RelataTestSupport
import Testing

/// Roles and per-table permissions, and `afterLogin` shaping sessions — over a live socket.
@Suite(.timeLimit(.minutes(10))) struct PermissionTests {
    static func services(_ backend: StorageBackend = .sqlite) throws -> (ServerServices, DataServiceTests.Database) {
        var schema = try DataServiceTests.schema()
        schema.script = RuleScript("""
            function afterLogin(login) {
                if (login.user === 'mallory') fail('mallory is locked out');
                if (login.user === 'ann') { login.roles.push('Auditor'); login.values.Region = 'EU'; }
            }
            """, fileName: "schema.js")
        let database = try DataServiceTests.Database(schema: SchemaDefinition(name: schema.name, tables: schema.tables, script: schema.script,
                                                                              updateOrder: schema.updateOrder), backend: backend)
        let permissions = try TablePermissions([
            "Clients": ["read": ["Sales", "Clerk"], "update": ["Manager"]],
            "OrderDetails": ["read": ["*"], "insert": ["Sales"], "update": ["Sales"], "delete": ["Sales"]],
        ])
        let service = try DataService(storage: database.service.storage, permissions: permissions, runtimes: 1)
        let sessions = try backend.makeSessions(in: database.database)
        let hash = ServerUser.hash(password: "pw", cost: 4)
        let users = [ServerUser(name: "ann", passwordHash: hash, roles: ["Sales"]), ServerUser(name: "mallory", passwordHash: hash, roles: ["Sales"])]
        return (try ServerServices(dataServices: [service], login: LoginService(users: users, sessions: sessions)), database)
    }

    @Test(arguments: StorageBackend.allCases)
    func afterLoginShapesTheSessionOrRefusesTheLogin(backend: StorageBackend) async throws {
        let (services, database) = try Self.services(backend)
        defer { withExtendedLifetime(database) {} }   // its database lives as long as the test
        try await withLiveServer(services) { client in
            let (status, data) = try await HTTPProtocolTests.post(client, "/v2/LoginService/Login", ProtocolMessages.LoginRequest(loginString: "User=ann;Password=pw"))
            #expect(status == 200)
            let session = try JSONDecoder().decode(ProtocolMessages.LoginAnswer.self, from: data).session
            #expect(session.roles == ["Sales", "Auditor"])
            #expect(session.values["Region"] == "EU")
            #expect(session.values["User"] == "ann")
            let (refused, answer) = try await HTTPProtocolTests.post(client, "/v2/LoginService/Login", ProtocolMessages.LoginRequest(loginString: "User=mallory;Password=pw"))
            #expect(refused == 403)
            #expect(try HTTPProtocolTests.error(answer).message == "mallory is locked out")
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func aDeniedOperationIsRefusedNamingTableAndOperationAndNothingIsApplied(backend: StorageBackend) async throws {
        let (services, database) = try Self.services(backend)
        try await withLiveServer(services) { client in
            let (_, data) = try await HTTPProtocolTests.post(client, "/v2/LoginService/Login", ProtocolMessages.LoginRequest(loginString: "User=ann;Password=pw"))
            let token = try JSONDecoder().decode(ProtocolMessages.LoginAnswer.self, from: data).token
            let read = try await HTTPProtocolTests.post(client, "/v2/DataService/GetData",
                                                        ProtocolMessages.GetDataRequest(requests: [DataRequest(table: "Clients")]), token: token)
            #expect(read.0 == 200)
            let orders = try await HTTPProtocolTests.post(client, "/v2/DataService/GetData",
                                                          ProtocolMessages.GetDataRequest(requests: [DataRequest(table: "Orders")]), token: token)
            #expect(orders.0 == 403)
            #expect(try HTTPProtocolTests.error(orders.1).code == "permissionDenied")
            #expect(try HTTPProtocolTests.error(orders.1).table == "Orders")
            #expect(try HTTPProtocolTests.error(orders.1).message == "read on Orders is not allowed for roles [Sales, Auditor]; no role may")

            let (clients, _, details) = try DataServiceTests.clientTables()
            try clients.rows[0].setValue("Acme Corp", forKey: "Name")
            try details.rows[0].setValue(9, forKey: "Quantity")
            let update = try await HTTPProtocolTests.post(client, "/v2/DataService/UpdateData",
                                                          ProtocolMessages.UpdateDataMessage(deltas: [details.makeDelta(), clients.makeDelta()]), token: token)
            #expect(update.0 == 403)
            #expect(try HTTPProtocolTests.error(update.1).message == "update on Clients is not allowed for roles [Sales, Auditor]; roles that may: [Manager]")
        }
        #expect(try database.service.storedRows(of: "OrderDetails")[0]["Quantity"] == 2, "nothing of the request was applied")
        #expect(try database.service.storedRows(of: "Clients")[0]["Name"] == "Acme")
    }

    @Test func permissionsNameUnknownOperations() {
        #expect(throws: RelataError.self) { try TablePermissions(["Clients": ["write": ["Sales"]]]) }
    }
}

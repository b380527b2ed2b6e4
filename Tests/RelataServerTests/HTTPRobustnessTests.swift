import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Hummingbird
import Relata
import RelataScript
@testable import RelataServer
import RelataServerTestSupport
import RelataTestSupport
import Testing

/// Hostile and heavy use over a live socket: guessing passwords, runaway rules, many clients at once.
@Suite(.timeLimit(.minutes(10))) struct HTTPRobustnessTests {
    @Test(arguments: StorageBackend.allCases)
    func repeatedWrongPasswordsLockTheNameOut(backend: StorageBackend) async throws {
        try await HTTPProtocolTests.Server(backend: backend).test { client in
            for _ in 0..<5 { #expect(try await HTTPProtocolTests.login(client, password: "guess") == nil) }
            let (status, data) = try await HTTPProtocolTests.post(client, "/v2/LoginService/Login",
                                                                  ProtocolMessages.LoginRequest(loginString: "User=ann;Password=secret"))
            #expect(status == 429, "even the right password waits out the lockout")
            #expect(try HTTPProtocolTests.error(data).code == "lockedOut")
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func aRunawayRuleFailsItsOwnRequestAndTheServerKeepsServing(backend: StorageBackend) async throws {
        let base = try DataServiceTests.schema()
        var tables = base.tables
        tables[1].script = RuleScript("""
            function beforeProcessDeltaChange(delta, change) { if (change.Status === 'spin') for (;;) {} }
            """, fileName: "Orders.js")
        let database = try DataServiceTests.Database(schema: SchemaDefinition(name: base.name, tables: tables, updateOrder: base.updateOrder),
                                                     backend: backend)
        let sessions = try backend.makeSessions(in: database.database)
        let ann = ServerUser(name: "ann", passwordHash: ServerUser.hash(password: "secret", cost: 4))
        let services = try ServerServices(dataServices: [database.service], login: LoginService(users: [ann], sessions: sessions))
        try await withLiveServer(services) { client in
            let token = try #require(try await HTTPProtocolTests.login(client))
            let orders = try DataServiceTests.clientTables().orders
            try orders.rows[0].setValue("spin", forKey: "Status")
            let (status, data) = try await HTTPProtocolTests.post(client, "/v2/DataService/UpdateData",
                                                                  ProtocolMessages.UpdateDataMessage(deltas: [orders.makeDelta()]), token: token)
            #expect(status == 200)
            let change = try JSONDecoder().decode(ProtocolMessages.UpdateDataMessage.self, from: data).deltas[0].changes[0]
            #expect(change.failure?.kind == .ruleError)
            #expect(change.message?.contains("time limit") == true, "\(change.message ?? "")")
            let (after, _) = try await HTTPProtocolTests.post(client, "/v2/DataService/GetData",
                                                              ProtocolMessages.GetDataRequest(requests: [DataRequest(table: "Orders")]), token: token)
            #expect(after == 200)
        }
        #expect(try database.service.storedRows(of: "Orders")[0]["Status"] == "open")
    }

    /// 20 clients change the same row from the same version at once: exactly one wins, the
    /// others hear of the conflict, and the stored value is the winner's.
    @Test(arguments: StorageBackend.allCases)
    func twentyClientsOnOneRowHaveOneWinnerAndNoLostUpdate(backend: StorageBackend) async throws {
        let server = try HTTPProtocolTests.Server(backend: backend)
        let service = server.database.service
        try await server.test { client in
            let token = try #require(try await HTTPProtocolTests.login(client))
            let port = client.port, session = client.session
            let outcomes = try await withThrowingTaskGroup(of: (Int64, DeltaChange.Status).self) { group in
                for quantity in Int64(10)..<30 {
                    group.addTask {
                        let details = try DataServiceTests.clientTables().details
                        try details.rows[1].setValue(.integer(quantity), forKey: "Quantity")
                        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/v2/DataService/UpdateData")!)
                        request.httpMethod = "POST"
                        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
                        request.httpBody = try JSONEncoder().encode(ProtocolMessages.UpdateDataMessage(deltas: [details.makeDelta()]))
                        let (data, _) = try await session.data(for: request)
                        let status = try JSONDecoder().decode(ProtocolMessages.UpdateDataMessage.self, from: data).deltas[0].changes[0].status
                        return (quantity, status)
                    }
                }
                return try await group.reduce(into: [(Int64, DeltaChange.Status)]()) { $0.append($1) }
            }
            let winners = outcomes.filter { $0.1 == .resolved }
            #expect(winners.count == 1)
            #expect(outcomes.filter { $0.1 == .failed }.count == 19)
            let stored = try service.storedRows(of: "OrderDetails")[1]["Quantity"]
            #expect(stored == .integer(winners.first?.0 ?? -1), "the stored value is the one change that was told it won")
        }
    }
}

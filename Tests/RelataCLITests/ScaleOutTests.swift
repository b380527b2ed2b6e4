import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Relata
import RelataRemote
import RelataServerTestSupport
import Testing
import RelataTestSupport

/// Three `relata serve` processes on one PostgreSQL database serve one set of clients: any
/// instance serves any request.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ScaleOutTests {
    /// POSTs a protocol call to an instance; the status and the body.
    static func call(_ port: Int, _ path: String, _ body: some Encodable, token: String? = nil) async throws -> (Int, Data) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/v2/\(path)")!)
        request.httpMethod = "POST"
        request.httpBody = try JSONEncoder().encode(body)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }

    @Test func threeInstancesOnOnePostgreSQLServeOneSetOfClients() async throws {
        let (database, drop) = try TestPostgres.makeDatabaseURL()
        defer { drop() }
        // One after the other: the first creates and seeds the tables, the others find them.
        var servers: [ServeCommandTests.Server] = []
        defer { for server in servers { server.kill() } }
        for _ in 0..<3 { servers.append(try await ServeCommandTests.Server(["--port", "0", "--database", database])) }
        let ports = servers.map(\.port)
        try #require(ports.allSatisfy { $0 > 0 })

        // Log in on the first, read on the second, write on the third, read it back on the first.
        let (status, answer) = try await Self.call(ports[0], "LoginService/Login",
                                                   ProtocolMessages.LoginRequest(loginString: "User=demo;Password=demo;Schema=PCTrade"))
        #expect(status == 200)
        let token = try JSONDecoder().decode(ProtocolMessages.LoginAnswer.self, from: answer).token
        let read = try await Self.call(ports[1], "DataService.PCTrade/GetData",
                                       ProtocolMessages.GetDataRequest(requests: [DataRequest(table: "Clients", where: "ClientId = 3")]), token: token)
        #expect(read.0 == 200, "a session made on one instance is valid on another")
        let rename = DeltaChange(changeId: 1, type: .update, oldValues: ["ClientId": 3, "ClientName": "Initech Ltd"],
                                 newValues: ["ClientId": 3, "ClientName": "Initech Holdings"])
        let written = try await Self.call(ports[2], "DataService.PCTrade/UpdateData",
                                          ProtocolMessages.UpdateDataMessage(deltas: [Delta(tableName: "Clients", keyFields: ["ClientId"], loggedFields: ["ClientId", "ClientName"], changes: [rename])]), token: token)
        #expect(written.0 == 200)
        #expect(try JSONDecoder().decode(ProtocolMessages.UpdateDataMessage.self, from: written.1).deltas.first?.changes.first?.status == .resolved)

        // Round-robin clients: each adapter talks to one instance, all see the same data.
        let adapters = ports.map { port in
            let adapter = RemoteDataAdapter(targetURL: URL(string: "http://127.0.0.1:\(port)")!, dataService: "DataService.PCTrade")
            adapter.credentials = RemoteCredentials(user: "demo", password: "demo")
            return adapter
        }
        for adapter in adapters {
            let clients = try await adapter.getDataTable("Clients", where: "ClientId = 3")
            #expect(clients.rows.first?["ClientName"] == "Initech Holdings")
        }

        // The same row version changed through every instance at once: exactly one change wins.
        var tables: [DataTable] = []
        for (index, adapter) in adapters.enumerated() {
            let clients = try await adapter.getDataTable("Clients", where: "ClientId = 5")
            try clients.rows[0].setValue(.decimal(Decimal(2000 + index)), forKey: "CreditLimit")
            tables.append(clients)
        }
        let outcomes = try await withThrowingTaskGroup(of: (Int, DeltaChange.Status, FailureKind?).self) { group in
            for (index, port) in ports.enumerated() {
                let delta = try tables[index].makeDelta()
                group.addTask {
                    let (status, body) = try await Self.call(port, "DataService.PCTrade/UpdateData", ProtocolMessages.UpdateDataMessage(deltas: [delta]),
                                                             token: token)
                    guard status == 200 else { return (index, .failed, nil) }
                    let change = try JSONDecoder().decode(ProtocolMessages.UpdateDataMessage.self, from: body).deltas.first?.changes.first
                    return (index, change?.status ?? .failed, change?.failure?.kind)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let winners = outcomes.filter { $0.1 == .resolved }.map(\.0)
        #expect(winners.count == 1, "one winner per row version: \(outcomes)")
        #expect(outcomes.filter { $0.1 != .resolved }.allSatisfy { $0.2 == .conflict }, "the others are conflicts: \(outcomes)")
        // A fresh client reads it back: the adapters above still hold their own (losing) edits as pending changes.
        let reader = RemoteDataAdapter(targetURL: URL(string: "http://127.0.0.1:\(ports[1])")!, dataService: "DataService.PCTrade")
        reader.credentials = RemoteCredentials(user: "demo", password: "demo")
        let stored = try await reader.getDataTable("Clients", where: "ClientId = 5")
        #expect(stored.rows.first?["CreditLimit"] == .decimal(Decimal(2000 + (winners.first ?? -1))), "the winner's value, nothing lost or mixed")

        // A logout on one instance ends the session there at once, and on the others within the
        // second they serve sessions from memory (Server.md); waited for with a deadline.
        #expect(try await Self.call(ports[1], "LoginService/Logout", [String: String](), token: token).0 == 200)
        let (refusedAtOnce, _) = try await Self.call(ports[1], "DataService.PCTrade/GetSchema", [String: String](), token: token)
        #expect(refusedAtOnce == 401, "the instance that logged out")
        for port in ports {
            let deadline = ContinuousClock.now + .seconds(30)
            var (refused, body) = try await Self.call(port, "DataService.PCTrade/GetSchema", [String: String](), token: token)
            while refused != 401, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
                (refused, body) = try await Self.call(port, "DataService.PCTrade/GetSchema", [String: String](), token: token)
            }
            #expect(refused == 401 && String(decoding: body, as: UTF8.self).contains("sessionNotFound"), "instance on \(port)")
        }
    }

    @Test func anInstanceKilledMidApplyLosesNothingAndTheClientRetriesOnTheStandbyByItself() async throws {
        let (database, drop) = try TestPostgres.makeDatabaseURL()
        defer { drop() }
        let folder = try TemporaryFolder()
        let schema = try ServerKilledTests.slowCommitSchema(in: folder)
        let first = try await ServeCommandTests.Server([schema, "--port", "0", "--database", database])
        let second = try await ServeCommandTests.Server([schema, "--port", "0", "--database", database])
        try #require(first.port > 0 && second.port > 0)
        defer { first.kill(); second.kill() }
        func address(_ server: ServeCommandTests.Server) -> URL { URL(string: "http://127.0.0.1:\(server.port)")! }

        let adapter = RemoteDataAdapter(targetURL: address(first), dataService: "DataService.PCTrade")
        adapter.credentials = RemoteCredentials(user: "demo", password: "demo")
        let clients = try await adapter.getDataTable("Clients", where: "ClientId = 2")
        let row = try #require(clients.rows.first)
        let before = row["ClientName"]
        try row.setValue("Typed before the crash", forKey: "ClientName")

        // The first instance dies in the apply's beforeCommit, its transaction open in PostgreSQL; the
        // adapter sends the batch again to the standby by itself, its session with it, and it applies once.
        adapter.standbyURLs = [address(second)]
        adapter.applyRetries = ApplyRetryPolicy(attempts: 3, firstDelay: .milliseconds(50))
        let session = adapter.session
        let killed = first.kill(whenLogged: ServerKilledTests.killLine)
        let delta = try await adapter.applyChanges(for: clients)
        #expect(killed.isSet, "the first instance was killed in beforeCommit")
        #expect(delta.changes.map(\.status) == [.resolved])
        #expect(adapter.targetURL == address(second), "the adapter stays with the instance that answered")
        #expect(adapter.session == session, "no new login: the instances share sessions")
        #expect(row.rowState == .unchanged && !row.isLocked)
        let reader = RemoteDataAdapter(targetURL: address(second), dataService: "DataService.PCTrade")
        reader.credentials = adapter.credentials
        #expect(before != row["ClientName"])
        #expect(try await reader.getDataTable("Clients", where: "ClientId = 2").rows.first?["ClientName"] == "Typed before the crash")
    }
}

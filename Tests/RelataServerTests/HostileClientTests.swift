import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Relata
import RelataScript
@testable import RelataServer
import RelataServerTestSupport
import RelataTestSupport
import Testing

/// Clients no well-behaved library would be — one that stops reading, trickles its request,
/// sends half a body, floods logins — hold nothing another client needs, and every request
/// they make ends. Each test is bounded in time; every wait has a deadline.
@Suite(.timeLimit(.minutes(5))) struct HostileClientTests {
    static func getDataBody(_ requests: [DataRequest]) throws -> Data {
        try JSONEncoder().encode(ProtocolMessages.GetDataRequest(requests: requests))
    }

    static func rawGetData(_ socket: RawConnection, token: String, body: Data) throws {
        try socket.send("POST /v2/DataService/GetData HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
                        + "Accept: \(RowStream.contentType)\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n", body: body)
    }

    /// Adds `count` order lines to order 10 (ids from 1,000 on).
    static func addDetails(_ count: Int, to service: DataService) async throws {
        // Seconds of blocking work: on a thread of its own, not one of the few the other tests share.
        try await OffCooperativePool.run { try service.storage.write { connection in
            try connection.begin()
            let dialect = connection.dialect
            let columns = ["DetailId", "OrderId", "Product", "Quantity", "UnitPrice"]
            let head = "INSERT INTO \(dialect.quote("OrderDetails")) (\(columns.map(dialect.quote).joined(separator: ", "))) VALUES "
            for start in stride(from: 1000, to: 1000 + count, by: 200) {
                let ids = start..<min(start + 200, 1000 + count)
                let rows = ids.indices.map { row in "(" + (1...5).map { dialect.placeholder((row - start) * 5 + $0) }.joined(separator: ", ") + ")" }
                let arguments = ids.flatMap { id -> [Value] in
                    [.integer(Int64(id)), 10, .string("Product number \(id) with a long name to fill the stream"), .integer(Int64(id % 7 + 1)), .decimal(Decimal(id % 100 + 1))]
                }
                try connection.execute(head + rows.joined(separator: ", "), arguments)
            }
            try connection.commit()
        } }
    }

    /// Runs `work` and fails the test when it takes longer than `bound`.
    static func within<Result>(_ bound: Duration, _ what: String, _ work: () async throws -> Result) async throws -> Result {
        let started = ContinuousClock.now
        let result = try await work()
        let took = ContinuousClock.now - started
        #expect(took < bound, "\(what) took \(took)")
        return result
    }

    /// A client that stops reading a large answer loses its connection after the write
    /// timeout, and its database reader is free again: twice as many stalled
    /// readers as the database has readers leave every other read working.
    @Test(arguments: StorageBackend.allCases)
    func aStalledReaderLosesItsConnectionAndHoldsNoReader(backend: StorageBackend) async throws {
        let server = try StreamedGetDataTests.server(backend, readers: 2)
        try await StreamedGetDataTests.addClients(150_000, to: server.database.service)
        var configuration = ServerConfiguration(port: 0)
        configuration.writeTimeout = .seconds(5)
        let lines = LogRecorder()
        try await server.test(configuration, logger: lines.logger) { client in
            let token = try #require(try await HTTPProtocolTests.login(client))
            let body = try Self.getDataBody([DataRequest(table: "Clients")])
            var stalled: [RawConnection] = []
            defer { stalled.forEach { $0.close() } }
            for _ in 0..<4 {
                let socket = try RawConnection(port: client.port)
                try Self.rawGetData(socket, token: token, body: body)
                #expect(try await socket.receiveSome(within: .seconds(60)).starts(with: Array("HTTP/1.1 200".utf8)))
                stalled.append(socket)
            }
            for round in 0..<4 {
                let answer = try await Self.within(.seconds(20), "a read beside 4 stalled ones (round \(round))") {
                    try await StreamedGetDataTests.getData(client, [DataRequest(table: "Orders")], token: token, binary: true)
                }
                #expect(answer.status == 200)
            }
            // The server closed each stalled connection (reading them here would un-stall them).
            #expect(await lines.waitFor(count: 4, of: "stopped reading", within: .seconds(120)), "the server cut off the stalled clients")
        }
    }

    /// Reads whose where expression names a calculated field need a rule runtime: a client
    /// that stops reading their answers holds none, so logins, applies and other such reads go on.
    @Test(arguments: StorageBackend.allCases)
    func stalledCalculatedFieldReadersHoldNoRuleRuntime(backend: StorageBackend) async throws {
        let server = try StreamedGetDataTests.server(backend)
        try await Self.addDetails(20_000, to: server.database.service)
        var configuration = ServerConfiguration(port: 0)
        configuration.writeTimeout = .seconds(120)   // the runtimes must be free long before
        try await server.test(configuration) { client in
            let token = try #require(try await HTTPProtocolTests.login(client))
            let body = try Self.getDataBody([DataRequest(table: "OrderDetails", where: "LineTotal > 0")])
            var stalled: [RawConnection] = []
            defer { stalled.forEach { $0.close() } }
            for _ in 0..<4 {   // twice the service's rule runtimes
                let socket = try RawConnection(port: client.port)
                try Self.rawGetData(socket, token: token, body: body)
                #expect(try await socket.receiveSome(within: .seconds(60)).starts(with: Array("HTTP/1.1 200".utf8)))
                stalled.append(socket)
            }
            _ = try await Self.within(.seconds(20), "a login") { try #require(try await HTTPProtocolTests.login(client)) }
            let calculated = try await Self.within(.seconds(20), "a calculated-field read") {
                try await StreamedGetDataTests.getData(client, [DataRequest(table: "OrderDetails", where: "LineTotal > 100", maxRecords: 5)],
                                                       token: token, binary: true)
            }
            #expect(try RowStreamTables(calculated.body).tables.first?.rowCount == 5)
            let (clients, _, _) = try DataServiceTests.clientTables()
            try clients.rows[0].setValue("Acme Renamed", forKey: "Name")
            let update = try JSONEncoder().encode(ProtocolMessages.UpdateDataMessage(deltas: [clients.makeDelta()]))
            let applied = try await Self.within(.seconds(20), "an apply") {
                try await client.request("/v2/DataService/UpdateData", body: update, token: token)
            }
            let processed = try JSONDecoder().decode(ProtocolMessages.UpdateDataMessage.self, from: applied.body)
            #expect(processed.deltas.first?.changes.first?.status == .resolved)
        }
    }

    /// A request head that never ends and a body that never arrives are cut off; a stranger's
    /// body is never read past the small limit.
    @Test func slowHeadsHalfSentBodiesAndLargeAnonymousBodiesAreCutOff() async throws {
        let server = try HTTPProtocolTests.Server()
        var configuration = ServerConfiguration(port: 0)
        configuration.idleTimeout = .seconds(10)
        configuration.bodyTimeout = .seconds(2)
        configuration.maxBodyBytesBeforeSession = 1 << 10
        try await server.test(configuration) { client in
            let token = try #require(try await HTTPProtocolTests.login(client))
            var sockets: [RawConnection] = []
            defer { sockets.forEach { $0.close() } }
            // Slowloris: a head trickled and never finished.
            for _ in 0..<20 {
                let socket = try RawConnection(port: client.port)
                try socket.send("POST /v2/DataService/GetData HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                sockets.append(socket)
            }
            // Half a body, from a client with a session.
            let half = try RawConnection(port: client.port)
            sockets.append(half)
            try half.send("POST /v2/DataService/GetData HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
                          + "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"requests\":")
            let answer = String(decoding: try await half.receiveSome(within: .seconds(30)), as: UTF8.self)
            #expect(answer.hasPrefix("HTTP/1.1 408"), "\(answer.prefix(200))")
            #expect(await half.closedByTheServer(within: .seconds(30)))
            for socket in sockets.prefix(20) {
                #expect(await socket.closedByTheServer(within: .seconds(30)), "an unfinished head is cut off")
            }
            // A large body without a session, or to log in: refused without reading it.
            let large = Data(repeating: UInt8(ascii: " "), count: 4 << 10) + Data("{}".utf8)
            let anonymous = try await client.request("/v2/DataService/GetData", body: large)
            #expect(anonymous.status == 401)
            let login = try await client.request("/v2/LoginService/Login", body: large)
            #expect(login.status == 413)
            // A client with a session still gets the large limit.
            let body = try Self.getDataBody([DataRequest(table: "Clients")])
            let padded = Data(repeating: UInt8(ascii: " "), count: 4 << 10) + body
            #expect(try await client.request("/v2/DataService/GetData", body: padded, token: token).status == 200)
        }
    }

    /// Password checks run a few at a time on workers of their own: a logged-in user's reads
    /// never wait behind them, a full line of checks is refused at once (503 with Retry-After),
    /// and logins with names nobody has (which no lockout stops) do no hashing at all.
    ///
    /// The flood goes on until the reads are done, so reads that waited behind it would never
    /// end (the generous bound fails them); every other assertion is a count, which a busy
    /// machine cannot make fail.
    @Test func aLoginFloodLeavesLoggedInUsersAndRealLoginsFast() async throws {
        // Cost 12: each check holds the one worker a good fraction of a second; 200 names (at most
        // 5 failures each before the lockout) keep it busy far longer than the test needs.
        let hash = ServerUser.hash(password: "right", cost: 12)
        let staff = (0..<200).map { ServerUser(name: "staff\($0)", passwordHash: hash) }
        let server = try HTTPProtocolTests.Server(otherUsers: staff)
        var configuration = ServerConfiguration(port: 0)
        configuration.loginWorkers = 1
        configuration.loginQueue = 64
        let checks = server.services.domains[0].login.passwordChecks
        try await server.test(configuration) { client in
            let token = try #require(try await HTTPProtocolTests.login(client))
            // The flood goes through a client of its own: only the server may make the reads wait.
            let settings = URLSessionConfiguration.ephemeral
            settings.httpMaximumConnectionsPerHost = 64
            let flooding = URLSession(configuration: settings)
            defer { flooding.invalidateAndCancel() }
            @Sendable func login(_ name: String) async throws -> LiveClient.Response {
                let body = try JSONEncoder().encode(ProtocolMessages.LoginRequest(loginString: "User=\(name);Password=guess"))
                return try await client.request("/v2/LoginService/Login", body: body, session: flooding)
            }
            func flood(_ names: [String]) -> Task<[LiveClient.Response], any Error> {
                Task { try await withThrowingTaskGroup(of: LiveClient.Response.self) { group in
                    for name in names { group.addTask { try await login(name) } }
                    return try await group.reduce(into: []) { $0.append($1) }
                } }
            }

            // Reads go on while a flood of real names keeps the one worker busy and a line waiting.
            let stop = ConditionFlag()
            let realNames = Task { try await withThrowingTaskGroup(of: LiveClient.Response.self) { group in
                var sent = 0, answers: [LiveClient.Response] = []
                for _ in 0..<8 {
                    let name = staff[sent % staff.count].name
                    group.addTask { try await login(name) }
                    sent += 1
                }
                while let answer = try await group.next() {
                    answers.append(answer)
                    guard !stop.isSet else { continue }
                    let name = staff[sent % staff.count].name
                    group.addTask { try await login(name) }
                    sent += 1
                }
                return answers
            } }
            #expect(await eventually(within: .seconds(60)) { checks.inProgress >= 1 }, "the flood is checking passwords")
            for round in 0..<3 {
                let answer = try await Self.within(.seconds(120), "a read during a login flood (round \(round))") {
                    try await StreamedGetDataTests.getData(client, [DataRequest(table: "Clients")], token: token, binary: true)
                }
                #expect(answer.status == 200)
            }
            stop.set()
            #expect(try await realNames.value.allSatisfy { $0.status == 401 })

            // A full line is refused at once.
            checks.setLimits(workers: 1, waiting: 0)
            let answers = try await flood(staff.suffix(8).map(\.name)).value
            let busy = answers.filter { $0.status == 503 }
            #expect(!busy.isEmpty, "a full line of password checks refuses at once")
            #expect(busy.allSatisfy { $0.header("Retry-After") == "1" && (try? HTTPProtocolTests.error($0.body).code) == "busy" })
            #expect(answers.allSatisfy { $0.status == 503 || $0.status == 401 })

            // Made-up names hash nothing: of a real login amid 60 of them, only the real one is checked.
            let hashedBefore = checks.completed
            let strangers = flood((0..<60).map { "stranger\($0)" })
            _ = try #require(try await HTTPProtocolTests.login(client))
            #expect(try await strangers.value.allSatisfy { $0.status == 401 })
            #expect(checks.completed - hashedBefore == 1, "made-up names take no password check")
        }
    }

    /// A client that sends a query the engine needs long for, then disconnects: the query
    /// stops (the server logs it), it does not compute on for a client that is gone.
    @Test func aDisconnectingClientStopsItsQuery() async throws {
        let server = try HTTPProtocolTests.Server()
        try await StreamedGetDataTests.addClients(3_000, to: server.database.service)
        let lines = LogRecorder()
        try await server.test(ServerConfiguration(port: 0), logger: lines.logger) { client in
            let token = try #require(try await HTTPProtocolTests.login(client))
            let heavy = """
                SELECT COUNT(*) AS N FROM Clients a WHERE EXISTS (
                    SELECT b.ClientId FROM Clients b WHERE UPPER(b.Name) <> LOWER(a.Name) AND EXISTS (
                        SELECT c.ClientId FROM Clients c WHERE UPPER(c.Name) = UPPER(b.Name) AND c.ClientId = a.ClientId + b.ClientId + 100000))
                """
            let body = try JSONEncoder().encode(ProtocolMessages.SQLGetDataRequest(sql: heavy))
            let socket = try RawConnection(port: client.port)
            try socket.send("POST /v2/DataService/SQLGetData HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
                            + "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n", body: body)
            // The query is under way (it needs minutes); then its client goes.
            try #require(await lines.waitFor(of: "a read began", within: .seconds(120)))
            socket.close()
            #expect(await lines.waitFor(of: "a read was stopped: its client went", within: .seconds(60)))
        }
    }

    /// Bodies held at once are bounded across all requests: a body that would take the server
    /// past its budget is answered 503 at once, and every request gives its share back.
    @Test func requestBodiesHeldAtOnceAreBounded() async throws {
        let budget = BodyBudget(total: 1_000)
        try await budget.withLease { first in
            try first.take(600)
            try await budget.withLease { second in
                #expect(throws: BodyBudget.Exhausted.self, "600 + 500 is past 1,000") { try second.take(500) }
                try second.take(400)
            }
            #expect(throws: BodyBudget.Exhausted.self, "still 600 held") { try first.take(401) }
        }
        try await budget.withLease { lease in try lease.take(1_000) }   // everything was given back

        let server = try HTTPProtocolTests.Server()
        var configuration = ServerConfiguration(port: 0, maxBodyBytes: 1 << 20)
        configuration.maxBodyBytesInFlight = 100_000
        try await server.test(configuration) { client in
            let token = try #require(try await HTTPProtocolTests.login(client))
            let padded = Data(repeating: UInt8(ascii: " "), count: 200_000) + (try Self.getDataBody([DataRequest(table: "Clients")]))
            let busy = try await client.request("/v2/DataService/GetData", body: padded, token: token)
            #expect(busy.status == 503)
            #expect(busy.header("Retry-After") == "1")
            #expect(try HTTPProtocolTests.error(busy.body).code == "busy")
            let small = try await client.request("/v2/DataService/GetData", body: try Self.getDataBody([DataRequest(table: "Clients")]), token: token)
            #expect(small.status == 200, "a body within the budget is read")
        }
    }
}

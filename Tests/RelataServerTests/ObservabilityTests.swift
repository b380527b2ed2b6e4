import Foundation
import Logging
import Relata
@testable import RelataServer
import RelataServerTestSupport
import RelataTestSupport
import Testing

/// What an operator reads: a log line per request, audit events, `/metrics`, and `/health`'s
/// liveness and readiness — over a live socket.
@Suite(.timeLimit(.minutes(10))) struct ObservabilityTests {
    static let configuration = ServerConfiguration(port: 0)

    /// The metadata of the one line logged for a request, found by its message.
    static func line(_ log: LogRecorder, _ message: String) -> Logger.Metadata? {
        Array(zip(log.messages, log.metadata)).last { $0.0 == message }?.1
    }

    @Test func eachRequestLogsOneLineWithItsStatusDurationUserRowsAndRequestId() async throws {
        let server = try HTTPProtocolTests.Server()
        let log = LogRecorder()
        try await withLiveServer(server.services, configuration: Self.configuration, logger: log.logger) { client in
            let token = try #require(try await HTTPProtocolTests.login(client))
            let read = try await client.request("/v2/DataService/GetData", body: Data(#"{"requests": [{"table": "Clients"}]}"#.utf8), token: token)
            #expect(read.status == 200)
            let (_, _, details) = try DataServiceTests.clientTables()
            try details.rows[0].setValue(9, forKey: "Quantity")
            let apply = try await HTTPProtocolTests.post(client, "/v2/DataService/UpdateData",
                                                         ProtocolMessages.UpdateDataMessage(deltas: [details.makeDelta()]), token: token)
            #expect(apply.0 == 200)
            #expect(await log.waitFor(of: "POST /v2/DataService/UpdateData 200", within: .seconds(10)))

            let readLine = try #require(Self.line(log, "POST /v2/DataService/GetData 200"))
            #expect(readLine["status"]?.description == "200")
            #expect(readLine["user"]?.description == "ann")
            #expect(readLine["domain"]?.description == "default")
            #expect(readLine["rows_read"]?.description == "2", "the two stored clients")
            #expect(Double(readLine["duration_ms"]?.description ?? "") != nil)
            #expect(readLine["hb.request.id"]?.description == read.header("x-request-id"), "the log and the answer name the same request")
            let applyLine = try #require(Self.line(log, "POST /v2/DataService/UpdateData 200"))
            #expect(applyLine["rows_changed"]?.description == "1")
            #expect(log.count(of: "POST /v2/DataService/GetData 200") == 1, "one line per request")
        }
    }

    /// A streamed answer is logged once its last byte is written — with every row it sent — or
    /// as cut short when its client goes before it ends.
    @Test(arguments: StorageBackend.allCases)
    func aStreamedAnswerIsLoggedWhenItEndsOrIsCutShort(backend: StorageBackend) async throws {
        let server = try StreamedGetDataTests.server(backend)
        try await StreamedGetDataTests.addClients(30_000, to: server.database.service)
        let log = LogRecorder()
        try await server.test(Self.configuration, logger: log.logger) { client in
            let token = try #require(try await HTTPProtocolTests.login(client))
            let whole = try await StreamedGetDataTests.getData(client, [DataRequest(table: "Clients")], token: token, binary: true)
            #expect(whole.header("Content-Length") == nil, "the answer streamed")
            #expect(await log.waitFor(of: "POST /v2/DataService/GetData 200", within: .seconds(10)))
            let line = try #require(Self.line(log, "POST /v2/DataService/GetData 200"))
            #expect(line["rows_read"]?.description == "30002", "every row sent, counted once the answer ended")
            #expect(line["answer"] == nil)

            // Three times the table, about 7 MB: more than the server's socket can hold unread
            // (4 MB at most here), so the answer cannot end before the client goes, however late
            // a loaded machine lets the client close.
            let socket = try RawConnection(port: client.port)
            let thrice = [DataRequest](repeating: DataRequest(table: "Clients"), count: 3)
            try HostileClientTests.rawGetData(socket, token: token, body: try HostileClientTests.getDataBody(thrice))
            #expect(try await socket.receiveSome(within: .seconds(60)).starts(with: Array("HTTP/1.1 200".utf8)))
            socket.close()
            try #require(await log.waitFor(count: 2, of: "POST /v2/DataService/GetData 200", within: .seconds(30)), "the second answer's line")
            #expect(Self.line(log, "POST /v2/DataService/GetData 200")?["answer"]?.description == "cut short")
        }
    }

    @Test func loginsAndRefusalsAreAuditedWithTheirUser() async throws {
        let server = try HTTPProtocolTests.Server()
        let log = LogRecorder()
        try await withLiveServer(server.services, configuration: Self.configuration, logger: log.logger) { client in
            #expect(try await HTTPProtocolTests.login(client, password: "wrong") == nil)
            let token = try #require(try await HTTPProtocolTests.login(client))
            _ = try await HTTPProtocolTests.post(client, "/v2/LoginService/Login", ProtocolMessages.LoginRequest(loginString: "User=nobody;Password=x"))
            let audits = log.metadata.compactMap { $0["audit"]?.description }
            #expect(audits.filter { $0 == "login.failed" }.count == 2)
            #expect(audits.contains("login.succeeded"))
            let failed = try #require(zip(log.messages, log.metadata).first { $0.1["audit"]?.description == "login.failed" })
            #expect(failed.0 == "a login failed: the password is wrong")
            #expect(failed.1["user"]?.description == "ann")
            #expect(!log.messages.joined().contains("wrong\""), "no password is logged")
            _ = token

            // Failures enough to lock the user out: the refusal after them is audited apart.
            for _ in 0..<6 { _ = try await HTTPProtocolTests.login(client, password: "wrong") }
            let locked = try #require(zip(log.messages, log.metadata).first { $0.1["audit"]?.description == "login.lockedOut" })
            #expect(locked.0.hasPrefix("a login was refused: too many failed logins for this user lately"))
            #expect(locked.1["user"]?.description == "ann")
        }

        // A refusal of a permission, with the user who was refused.
        let (services, database) = try PermissionTests.services()
        defer { withExtendedLifetime(database) {} }
        let refusals = LogRecorder()
        try await withLiveServer(services, configuration: Self.configuration, logger: refusals.logger) { client in
            let (_, data) = try await HTTPProtocolTests.post(client, "/v2/LoginService/Login", ProtocolMessages.LoginRequest(loginString: "User=ann;Password=pw"))
            let token = try JSONDecoder().decode(ProtocolMessages.LoginAnswer.self, from: data).token
            let orders = try await HTTPProtocolTests.post(client, "/v2/DataService/GetData",
                                                          ProtocolMessages.GetDataRequest(requests: [DataRequest(table: "Orders")]), token: token)
            #expect(orders.0 == 403)
            let denied = try #require(zip(refusals.messages, refusals.metadata).first { $0.1["audit"]?.description == "permission.denied" })
            #expect(denied.0 == "read on Orders is not allowed for roles [Sales, Auditor]; no role may")
            #expect(denied.1["user"]?.description == "ann")
            #expect(denied.1["table"]?.description == "Orders")
        }
    }

    @Test func metricsCountRequestsAppliesChangesRuleFailuresAndLoginFailures() async throws {
        let server = try HTTPProtocolTests.Server()
        let metrics = ServerMetrics()
        try await withLiveServer(server.services, configuration: Self.configuration, metrics: metrics) { client in
            #expect(try await HTTPProtocolTests.login(client, password: "wrong") == nil)
            let token = try #require(try await HTTPProtocolTests.login(client))
            let (_, _, details) = try DataServiceTests.clientTables()
            try details.rows[0].setValue(9, forKey: "Quantity")
            try details.rows[1].setValue(-1, forKey: "Quantity")   // the rule refuses it
            let apply = try await HTTPProtocolTests.post(client, "/v2/DataService/UpdateData",
                                                         ProtocolMessages.UpdateDataMessage(deltas: [details.makeDelta()]), token: token)
            #expect(apply.0 == 200)
            // Paths a hostile client makes up add no series of their own.
            for made in ["/v2/DataService/Made1", "/v2/DataService.Made2/GetData", "/v2/Made3/x", "/made4"] {
                _ = try await client.request(made, body: Data("{}".utf8), token: token)
            }
            // A request's metrics are recorded once its answer is written: wait for the last one.
            var text = ""
            #expect(await eventually(within: .seconds(10)) {
                text = metrics.registry?.emitToString() ?? ""
                return text.contains(#"relata_requests_total{service="http",method="other",status="404"} 3"#)
            })
            let scraped = try await client.request("/metrics", method: "GET")
            #expect(scraped.status == 200)
            #expect(scraped.header("content-type")?.hasPrefix("text/plain; version=0.0.4") == true)
            text = String(decoding: scraped.body, as: UTF8.self)
            for expected in [
                #"relata_requests_total{service="LoginService",method="Login",status="401"} 1"#,
                #"relata_requests_total{service="LoginService",method="Login",status="200"} 1"#,
                #"relata_requests_total{service="DataService.Shop",method="UpdateData",status="200"} 1"#,
                #"relata_requests_total{service="DataService.Shop",method="other",status="404"} 1"#,
                #"relata_request_duration_seconds_count{service="DataService.Shop",method="UpdateData"} 1"#,
                #"relata_applies_total{outcome="failed"} 1"#,
                #"relata_changes_total{verdict="refusal"} 1"#,
                #"relata_changes_total{verdict="resolved"} 1"#,
                #"relata_rule_failures_total{kind="refusal"} 1"#,
                #"relata_login_failures_total{reason="wrongCredentials"} 1"#,
                #"relata_rule_runtimes{domain="default",schema="Shop"} 2"#,
                #"relata_rule_runtimes_busy{domain="default",schema="Shop"} 0"#,
                #"relata_database_connections_in_use{database="default/Shop"}"#,
            ] {
                #expect(text.contains(expected), "\(expected) in:\n\(text)")
            }
            #expect(!text.contains("Made"), "no label value comes from a path as sent")
        }
    }

    @Test func queriesAndScriptsStoppedByTheirTimeLimitAreCounted() async throws {
        var schema = try DataServiceTests.schema()
        schema.tables[0].script = RuleScript("function beforeGetData() { while (true) {} }", fileName: "Clients.js")
        let server = try HTTPProtocolTests.Server(schema: schema)
        let metrics = ServerMetrics()
        try await withLiveServer(server.services, configuration: Self.configuration, metrics: metrics) { client in
            let token = try #require(try await HTTPProtocolTests.login(client))
            let read = try await client.request("/v2/DataService/GetData", body: Data(#"{"requests": [{"table": "Clients"}]}"#.utf8), token: token)
            #expect(read.status >= 400)
            let text = String(decoding: try await client.request("/metrics", method: "GET").body, as: UTF8.self)
            let line = try #require(text.split(separator: "\n").first { $0.hasPrefix(#"relata_time_limit_stops_total{what="script"}"#) })
            #expect((Int(line.split(separator: " ").last ?? "") ?? 0) >= 1, "\(text)")
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func readinessNamesADatabaseThatDoesNotAnswerWhileLivenessStaysUp(backend: StorageBackend) async throws {
        let server = try HTTPProtocolTests.Server(backend: backend)
        let database = server.database.database
        try await withLiveServer(server.services, configuration: Self.configuration) { client in
            let ready = try await client.request("/health/ready", method: "GET")
            #expect(ready.status == 200, "\(String(decoding: ready.body, as: UTF8.self))")
            let answer = try #require(try JSONSerialization.jsonObject(with: ready.body) as? [String: Any])
            #expect(answer["status"] as? String == "ready")
            let checks = try #require(answer["checks"] as? [[String: Any]])
            #expect(checks.map { $0["name"] as? String } == ["sessions", "default/Shop"])
            #expect((checks[1]["rulesVersion"] as? String)?.hasPrefix("sha256:") == true)
            guard backend == .postgres else { return }
            // The data's connections closed, as when PostgreSQL went away.
            database.close()
            let gone = try await client.request("/health/ready", method: "GET")
            #expect(gone.status == 503)
            let text = String(decoding: gone.body, as: UTF8.self)
            #expect(text.contains(#""name":"default/Shop","problem":"the database did not answer"#), "\(text)")
            #expect(try await client.request("/health/live", method: "GET").status == 200, "the process still lives")
        }
    }
}

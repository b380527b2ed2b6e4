import Foundation
import RelataServerTestSupport
import Testing
import RelataTestSupport

/// `relata get` and `relata apply` against a real `relata serve` process.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ClientCommandTests {
    static let demo = ["RELATA_USER": "demo", "RELATA_PASSWORD": "demo"]
    static let scenario = RelataProcess.packageRoot.appendingPathComponent("Examples/PCTrade/edits/scenario.json").path

    /// A `relata serve` of PCTrade on a SQLite file or a PostgreSQL database of its own.
    /// Stopped with SIGTERM once `body` returns; killed when it throws.
    func withServer(_ backend: StorageBackend = .sqlite, options: [String] = [], _ body: (String) async throws -> Void) async throws {
        let folder = try TemporaryFolder()
        var database = folder.url.appendingPathComponent("pctrade.sqlite").path
        var drop: @Sendable () -> Void = {}
        if backend == .postgres { (database, drop) = try TestPostgres.makeDatabaseURL() }
        defer { drop() }
        let server = try await ServeCommandTests.Server(["--port", "0", "--database", database] + options)
        defer { server.kill() }
        try #require(server.port > 0)
        try await body("http://127.0.0.1:\(server.port)")
        #expect(await server.stop() == 0)
    }

    /// A client command logs out when it is done, however it ends: it leaves no session on the
    /// server (one trial piled up 41).
    @Test func clientCommandsLeaveNoSessionBehind() async throws {
        let folder = try TemporaryFolder()
        let database = folder.url.appendingPathComponent("pctrade.sqlite").path
        let server = try await ServeCommandTests.Server(["--port", "0", "--database", database])
        try #require(server.port > 0)
        defer { server.kill() }
        let url = "http://127.0.0.1:\(server.port)"
        #expect(try await RelataProcess.run(["get", url, "Clients"], environment: Self.demo).status == 0)
        let applied = try await RelataProcess.run(["apply", url, "--edits", Self.scenario], environment: Self.demo)
        #expect(applied.status == 1, "the scenario refuses some edits: \(applied.errorOutput)")
        let refused = try await RelataProcess.run(["get", url, "Nope"], environment: Self.demo)
        #expect(refused.status != 0, "a command that fails after its login")
        let sessions = try await RelataProcess.run(["sessions", "list", "--sessions", database + "-sessions", "--json"])
        #expect(sessions.status == 0, "\(sessions.errorOutput)")
        let listed = try JSONSerialization.jsonObject(with: Data(sessions.output.utf8)) as? [Any]
        #expect(listed?.isEmpty == true, "\(sessions.output)")
    }

    /// `relata get` shows what a client's user sees: lookup and calculated fields too (computed by
    /// the rules here, marked), and `--fields` takes them.
    @Test func getShowsLookupAndCalculatedFields() async throws {
        try await withServer { url in
            let orders = try await RelataProcess.run(["get", url, "Orders", "--where", "OrderId = 145"], environment: Self.demo)
            #expect(orders.status == 0, "\(orders.errorOutput)")
            #expect(orders.output.hasPrefix("OrderId  ClientId  OrderDate"), "\(orders.output)")
            #expect(orders.output.contains("ClientName*"), "\(orders.output)")
            #expect(orders.output.hasSuffix("1 row; * computed by the rules here (lookup or calculated)\n"), "\(orders.output)")

            let lines = try await RelataProcess.run(["get", url, "OrderDetails", "--where", "DetailId = 415", "--fields", "DetailId,LineTotal,ProductName",
                                               "--json"], environment: Self.demo)
            #expect(lines.status == 0, "\(lines.errorOutput)")
            let rows = try #require(try JSONSerialization.jsonObject(with: Data(lines.output.utf8)) as? [[String: Any]])
            #expect(rows.count == 1 && Set(rows[0].keys) == ["DetailId", "LineTotal", "ProductName"], "\(lines.output)")
            #expect(rows[0]["ProductName"] as? String != nil && rows[0]["LineTotal"] as? Double != nil, "\(lines.output)")

            let unknown = try await RelataProcess.run(["get", url, "OrderDetails", "--fields", "DetailId,Colour"], environment: Self.demo)
            #expect(unknown.status == 2 && unknown.errorOutput.contains("Colour"), "\(unknown.errorOutput)")
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func getPrintsATableAsTextOrJSON(backend: StorageBackend) async throws {
        try await withServer(backend) { url in
            let text = try await RelataProcess.run(["get", url, "Clients"], environment: Self.demo)
            #expect(text.status == 0, "\(text.errorOutput)")
            #expect(text.output.hasPrefix("ClientId  ClientName"))
            #expect(text.output.contains("Acme Ltd"))
            #expect(text.output.hasSuffix("40 rows\n"))

            let json = try await RelataProcess.run(["get", url, "Orders", "--where", "ClientId = :c", "--param", "c=9", "--fields", "OrderId,Status",
                                              "--json"], environment: Self.demo)
            #expect(json.status == 0, "\(json.errorOutput)")
            let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]])
            #expect(rows.count == 4)
            #expect(rows.allSatisfy { Set($0.keys) == ["OrderId", "Status"] })
        }
    }

    /// `relata get --sql` against a server prints, byte for byte, what `relata query` prints
    /// offline over the same data — as a table and as JSON.
    @Test(arguments: StorageBackend.allCases)
    func getWithSQLPrintsWhatQueryPrintsOffline(backend: StorageBackend) async throws {
        let sql = """
            SELECT c.ClientName, COUNT(*) AS Orders, MIN(o.OrderDate) AS First
            FROM Clients c JOIN Orders o ON o.ClientId = c.ClientId
            WHERE o.Status <> :status GROUP BY c.ClientName ORDER BY Orders DESC, 1 LIMIT 5
            """
        try await withServer(backend) { url in
            for format in [[], ["--json"]] {
                let served = try await RelataProcess.run(["get", url, "--sql", sql, "--param", "status=cancelled"] + format, environment: Self.demo)
                let offline = try await RelataProcess.run(["query", RelataProcess.pcTradeSchema, sql, "--param", "status=cancelled"] + format)
                #expect(served.status == 0, "\(served.errorOutput)")
                #expect(offline.status == 0, "\(offline.errorOutput)")
                #expect(served.output == offline.output)
                #expect(served.output.contains("5 rows") || format == ["--json"])
            }
            let refused = try await RelataProcess.run(["get", url, "--sql", "SELECT ClientName FROM Clinets"], environment: Self.demo)
            #expect(refused.status != 0)
            #expect(refused.errorOutput.contains("no table 'Clinets' (did you mean Clients?)"), "\(refused.errorOutput)")
            let both = try await RelataProcess.run(["get", url, "Clients", "--sql", "SELECT * FROM Clients"], environment: Self.demo)
            #expect(both.status != 0)
            #expect(both.errorOutput.contains("not both"))
        }
    }

    /// `relata serve --query-time-limit` stops a query that would run for hours; the server
    /// goes on answering.
    @Test(arguments: StorageBackend.allCases)
    func aQueryRunningPastTheServersTimeLimitIsStopped(backend: StorageBackend) async throws {
        try await withServer(backend, options: ["--query-time-limit", "0.3"]) { url in
            let slow = try await RelataProcess.run(["get", url, "--sql", """
                SELECT COUNT(*) AS N FROM OrderDetails a JOIN OrderDetails b ON a.DetailId <> b.DetailId
                JOIN OrderDetails c ON b.DetailId <> c.DetailId JOIN OrderDetails d ON c.DetailId <> d.DetailId
                """], environment: Self.demo)
            #expect(slow.status != 0)
            #expect(slow.errorOutput.contains("was stopped"), "\(slow.errorOutput)")
            let quick = try await RelataProcess.run(["get", url, "--sql", "SELECT COUNT(*) AS N FROM OrderDetails", "--json"], environment: Self.demo)
            #expect(quick.status == 0, "\(quick.errorOutput)")
        }
        let refused = try await RelataProcess.run(["serve", "--query-time-limit", "0"])
        #expect(refused.status != 0)
        #expect(refused.errorOutput.contains("--query-time-limit must be more than 0"))
    }

    @Test(arguments: StorageBackend.allCases)
    func applyPrintsWhatRunPrintsOfflineAndValidateOnlySendsNothing(backend: StorageBackend) async throws {
        try await withServer(backend) { url in
            let validated = try await RelataProcess.run(["apply", url, "--edits", Self.scenario, "--validate-only"], environment: Self.demo)
            let offline = try await RelataProcess.run(["run", RelataProcess.pcTradeSchema, "--edits", Self.scenario])
            #expect(validated.status == offline.status)
            #expect(validated.output.contains("5 validated, 5 refused, 1 failed"), "\(validated.output)")
            func refusals(_ output: String) -> [Substring] { output.split(separator: "\n").filter { $0.contains("✘") } }
            #expect(refusals(validated.output) == refusals(offline.output), "validating against the server gives the offline refusals")
            let before = try await RelataProcess.run(["get", url, "Clients"], environment: Self.demo)
            #expect(!before.output.contains("Northwind"), "a validation sends nothing")

            let applied = try await RelataProcess.run(["apply", url, "--edits", Self.scenario], environment: Self.demo)
            #expect(applied.status == 1, "refusals are exit status 1, as with run")
            #expect(applied.output == offline.output, "the same verdicts, messages, locations, keys and values")
            let after = try await RelataProcess.run(["get", url, "Clients"], environment: Self.demo)
            #expect(after.output.contains("Northwind Traders"))
        }
    }

    @Test func credentialsComeFromTheEnvironmentAndFailuresSayWhatToDo() async throws {
        try await withServer { url in
            let noPassword = try await RelataProcess.run(["get", url, "Clients", "--user", "demo"], environment: ["RELATA_PASSWORD": ""].filter { _ in false })
            #expect(noPassword.status == 2)
            #expect(noPassword.errorOutput.contains("RELATA_PASSWORD"))

            let wrong = try await RelataProcess.run(["get", url, "Clients"], environment: ["RELATA_USER": "demo", "RELATA_PASSWORD": "nope"])
            #expect(wrong.status == 5, "the server refused the user")
            #expect(wrong.errorOutput.contains("loginFailed"))
            #expect(!wrong.errorOutput.contains("nope"), "the password is never echoed")

            let unknown = try await RelataProcess.run(["get", url, "Invoices"], environment: Self.demo)
            #expect(unknown.status == 2)
            #expect(unknown.errorOutput.contains("Invoices"))
        }
        let nowhere = try await RelataProcess.run(["get", "http://127.0.0.1:9", "Clients"], environment: Self.demo)
        #expect(nowhere.status == 4, "a server that is not there is retryable: exit status 4")
        #expect(nowhere.errorOutput.contains("retry"))
    }

    @Test func theDataAccessExampleRunsAsTheReadmeSays() async throws {
        try await withServer { url in
            let home = try TemporaryFolder()
            let app = RelataProcess.binary.deletingLastPathComponent().appendingPathComponent("relata-data-access")
            let result = try await RelataProcess.run(app, [], environment: ["RELATA_SERVER": url, "DATA_ACCESS_HOME": home.url.path])
            let text = result.output
            #expect(result.status == 0, "\(text)\(result.errorOutput)")
            #expect(text.contains("data ready from the server: 40 clients"))
            #expect(text.contains("refused here: a discount of 50% is outside 0–30% (rules/Clients.js:13:9)"))
            #expect(text.contains("applied: order 151, line 435 refers to order 151; pending now: false"))
            #expect(text.contains("the server refused: row (ClientId=2) changed since it was read"))
            #expect(FileManager.default.fileExists(atPath: home.url.appendingPathComponent("DataAccessApp.briefcase").path))
        }
        // A server that is down is said to be unreachable, not a login without credentials.
        let home = try TemporaryFolder()
        let app = RelataProcess.binary.deletingLastPathComponent().appendingPathComponent("relata-data-access")
        let down = try await RelataProcess.run(app, [], environment: ["RELATA_SERVER": "http://127.0.0.1:9", "DATA_ACCESS_HOME": home.url.path])
        #expect(down.status == 1)
        #expect(down.output.contains("alert: the server at http://127.0.0.1:9 is unreachable, and there is no briefcase to start from"), "\(down.output)")
        #expect(!down.output.contains("noCredentials"))
    }
}

extension ClientCommandTests {
    /// A request the server refuses as a whole (the clerk may not update Clients) still gives
    /// each edit its verdict, with the server's words — as text and complete as JSON — and exit 1.
    @Test func anEditTheCallersRolesForbidIsNamedByValidateOnlyAndFailsAlone() async throws {
        let folder = try TemporaryFolder()
        _ = try folder.write("users.json", try String(contentsOfFile: RelataProcess.packageRoot
            .appendingPathComponent("Examples/PCTrade/users.json").path, encoding: .utf8))
        let config = try folder.write("server.json", """
            {"port": 0, "domains": [{"name": "Shop", "usersFile": "users.json",
              "schemas": [{"schema": "\(RelataProcess.pcTradeSchema)", "database": "shop.sqlite",
                           "permissions": {"Clients": {"read": ["*"]}, "OrderDetails": {"read": ["Sales"]},
                                           "*": {"read": ["*"], "insert": ["*"], "update": ["*"]}}}]}]}
            """)
        let edits = try folder.write("edits.json", """
            [{"update": "Products", "key": 3, "values": {"UnitsInStock": 10}},
             {"update": "Clients", "key": 1, "values": {"ContactPhone": "+1 555 0100"}}]
            """)
        let server = try await ServeCommandTests.Server(["--config", config])
        defer { server.kill() }
        try #require(server.port > 0)
        let clerk = ["RELATA_USER": "clerk", "RELATA_PASSWORD": "clerk"]
        let url = "http://127.0.0.1:\(server.port)"

        // What the clerk may do came with the schema: --validate-only names the edit his roles forbid.
        let validated = try await RelataProcess.run(["apply", url, "--edits", edits, "--validate-only"], environment: clerk)
        #expect(validated.status == 1, "\(validated.output) \(validated.errorOutput)")
        #expect(validated.output.split(separator: "\n").filter { $0.contains("✘") }.count == 1, "\(validated.output)")
        #expect(validated.output.contains("update on Clients is not allowed for roles [Clerk]"), "\(validated.output)")

        // Applied, the forbidden edit fails here unsent; the other one applies.
        let text = try await RelataProcess.run(["apply", url, "--edits", edits], environment: clerk)
        #expect(text.status == 1, "\(text.errorOutput)")
        #expect(text.output.split(separator: "\n").filter { $0.contains("✘") }.count == 1, "\(text.output)")
        #expect(text.output.contains("update on Clients is not allowed for roles [Clerk]"), "\(text.output)")
        let stock = try await RelataProcess.run(["get", url, "Products", "--where", "ProductId = 3", "--fields", "UnitsInStock", "--json"], environment: clerk)
        #expect(stock.output.contains("10"), "the allowed edit was applied: \(stock.output)")
        let closed = try await RelataProcess.run(["get", url, "OrderDetails"], environment: clerk)
        #expect(closed.status == 5, "a read the roles may not make: the server refused the user")
        #expect(closed.errorOutput.contains("read on OrderDetails is not allowed for roles [Clerk]; roles that may: [Sales]"), "\(closed.errorOutput)")

        let json = try await RelataProcess.run(["apply", url, "--edits", edits, "--json"], environment: clerk)
        #expect(json.status == 1)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let verdicts = try #require(report["verdicts"] as? [[String: Any]])
        #expect(verdicts.count == 2)
        #expect(verdicts.contains { $0["verdict"] as? String == "failed" && ($0["message"] as? String)?.contains("update on Clients is not allowed") == true })
    }
}

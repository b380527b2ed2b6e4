import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import RelataServerTestSupport
import Testing
import RelataTestSupport

/// `relata serve`: a real server process, reached over a socket.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ServeCommandTests {
    /// A running `relata serve`, stopped with SIGTERM when the test is done with it.
    ///
    /// Every wait — for the line that says where it listens, for a log line, for the process to
    /// end — is done by a thread of its own, never by the test's task on one of Swift's
    /// cooperative threads, which the tests running beside need.
    final class Server: Sendable {
        let process: Process
        /// Its standard error, read as it comes by a thread of its own.
        let log: ProcessLog
        /// The port it listens on; 0 when it did not say.
        let port: Int

        /// `relata serve` with `arguments` — and two rule runtimes unless they say how many:
        /// the tests' servers start by the dozen beside other tests, and compiling a default
        /// pool each time would only slow them.
        init(_ arguments: [String]) async throws {
            let process = Process()
            process.executableURL = RelataProcess.binary
            process.arguments = ["serve"] + arguments + (arguments.contains("--rule-runtimes") ? [] : ["--rule-runtimes", "2"])
            process.currentDirectoryURL = RelataProcess.packageRoot
            let output = Pipe(), errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            await ProcessSlots.shared.take()
            defer { ProcessSlots.shared.give() }
            try process.run()
            self.process = process
            let log = ProcessLog()
            log.collect(from: errors.fileHandleForReading)
            self.log = log
            // The first line says where it listens: "serving PCTrade on http://127.0.0.1:PORT …".
            // Waited for with a deadline: a server that never says it listens is killed, and the
            // test fails instead of hanging.
            let firstLine = ConditionFlag()
            let line = LineBuffer()
            let reader = output.fileHandleForReading
            Thread {
                while true {
                    let byte = reader.readData(ofLength: 1)
                    if byte.isEmpty || byte == Data("\n".utf8) { break }
                    line.append(byte)
                }
                firstLine.set()
            }.start()
            guard await firstLine.waited(for: .seconds(120)) else {
                Issue.record("relata serve did not say where it listens within 120 s; killed")
                Foundation.kill(process.processIdentifier, SIGKILL)
                port = 0
                return
            }
            let text = line.text
            port = text.range(of: #"127\.0\.0\.1:(\d+)"#, options: .regularExpression)
                .flatMap { Int(text[$0].split(separator: ":").last ?? "") } ?? 0
        }

        /// A test that stops early (a failed `#require`, a thrown error) leaves no server behind.
        deinit { kill() }

        /// Kills the server at once (SIGKILL) when it still runs: what a `defer` does, which
        /// cannot wait for a graceful stop.
        func kill() {
            if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        }

        /// Stops the server with SIGTERM; one still running 30 s later is killed (and the test
        /// fails). Its whole log is in ``errorOutput`` once this returns.
        func stop() async -> Int32 {
            if !(await stopping(process, within: .seconds(30))) { Issue.record("relata serve ignored SIGTERM for 30 s and was killed") }
            let log = self.log
            _ = await onOwnThread { log.waitForEnd(within: .seconds(30)) }
            return process.terminationStatus
        }

        /// Sends SIGKILL the moment the server logs `text`; the flag says it did. A thread of its
        /// own waits for the line (not a task: on a busy machine a sleeping task may wake too late).
        func kill(whenLogged text: String) -> ConditionFlag {
            let pid = process.processIdentifier
            let killed = ConditionFlag()
            Thread { [log] in
                guard log.wait(for: text, within: .seconds(600)) else { return }
                Foundation.kill(pid, SIGKILL)
                killed.set()
            }.start()
            return killed
        }

        /// Whether the server logs `text` within `limit`.
        func waitForLog(_ text: String, within limit: Duration) async -> Bool {
            let log = self.log
            return await onOwnThread { log.wait(for: text, within: limit) }
        }

        /// What the server logged so far; all of it once ``stop()`` returned.
        var errorOutput: String { log.text }

        func post(_ path: String, _ body: String, token: String? = nil) async throws -> (Int, [String: Any]) {
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
            request.httpMethod = "POST"
            request.httpBody = Data(body.utf8)
            if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
            let (data, response) = try await URLSession.shared.data(for: request)
            let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, json)
        }
    }

    @Test func servesPCTradeFromADatabaseItSeedsOnceAndStopsOnSIGTERM() async throws {
        let folder = try TemporaryFolder()
        let database = folder.url.appendingPathComponent("pc.sqlite").path
        let server = try await Server(["--port", "0", "--database", database])
        #expect(server.port > 0, "the server says where it listens")
        let (loginStatus, login) = try await server.post("/v2/LoginService/Login", #"{"loginString": "User=demo;Password=demo"}"#)
        #expect(loginStatus == 200)
        let token = try #require(login["token"] as? String)
        let (status, answer) = try await server.post("/v2/DataService.PCTrade/GetData", #"{"requests": [{"table": "Clients"}]}"#, token: token)
        #expect(status == 200)
        #expect(((answer["tables"] as? [[String: Any]])?.first?["rows"] as? [Any])?.isEmpty == false)
        let (wrong, _) = try await server.post("/v2/LoginService/Login", #"{"loginString": "User=demo;Password=nope"}"#)
        #expect(wrong == 401)
        // The helper's `--rule-runtimes 2` is what the schema's pool has.
        let (metrics, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(server.port)/metrics")!)
        #expect(String(decoding: metrics, as: UTF8.self).contains(#"relata_rule_runtimes{domain="default",schema="PCTrade"} 2"#))

        // A second server on the same port is told the port is taken.
        let clash = try await RelataProcess.run(["serve", "--port", "\(server.port)", "--database", folder.url.appendingPathComponent("other.sqlite").path])
        #expect(clash.status == 2)
        #expect(clash.errorOutput.contains("port \(server.port) on 127.0.0.1 is taken"), "\(clash.errorOutput)")

        #expect(await server.stop() == 0, "SIGTERM stops it gracefully")
        #expect(server.errorOutput.contains("created and seeded"))

        let again = try await Server(["--port", "0", "--database", database])
        #expect(again.port > 0)
        #expect(await again.stop() == 0)
        #expect(!again.errorOutput.contains("created and seeded"), "the database is reused")
    }

    @Test func aMissingSchemaOrUsersFileIsABadInput() async throws {
        let noSchema = try await RelataProcess.run(["serve", "/nonexistent/s.schema.json", "--port", "0"])
        #expect(noSchema.status == 2)
        #expect(noSchema.errorOutput.contains("the schema file does not exist"))
        let folder = try TemporaryFolder()
        let users = try folder.write("users.json", #"{"name": "x"}"#)
        let badUsers = try await RelataProcess.run(["serve", "--port", "0", "--users", users, "--database", folder.url.appendingPathComponent("d.sqlite").path])
        #expect(badUsers.status == 2)
        #expect(badUsers.errorOutput.contains("users.json: expected an array"), "\(badUsers.errorOutput)")
        #expect(!badUsers.errorOutput.contains("created and seeded"), "nothing is created before the input is known to be good")
        let badPort = try await RelataProcess.run(["serve", "--port", "70000"])
        #expect(badPort.status == 64)
        for runtimes in ["0", "1025", "-3"] {
            let badRuntimes = try await RelataProcess.run(["serve", "--port", "0", "--rule-runtimes", runtimes])
            #expect(badRuntimes.status == 64, "--rule-runtimes \(runtimes)")
            #expect(badRuntimes.errorOutput.contains("--rule-runtimes"), "\(badRuntimes.errorOutput)")
        }

        // A database or session file whose folder is missing is named, with the reason.
        let config = try folder.write("server.json", """
            {"port": 0, "sessions": "state-t/sessions.sqlite",
             "domains": [{"name": "Shop", "usersFile": "users.json", "schemas": [{"schema": "\(RelataProcess.pcTradeSchema)"}]}]}
            """)
        _ = try folder.write("users.json", "[]")
        let noFolder = try await RelataProcess.run(["serve", "--config", config])
        #expect(noFolder.status == 2)
        #expect(noFolder.errorOutput.contains("state-t/sessions.sqlite: the database cannot be opened: its folder"), "\(noFolder.errorOutput)")
        #expect(noFolder.errorOutput.contains("state-t does not exist"), "\(noFolder.errorOutput)")
    }
}

extension ServeCommandTests {
    @Test func aConfigurationServesDomainsWithTheirUsersSchemasAndPermissions() async throws {
        let folder = try TemporaryFolder()
        _ = try folder.write("lab/Lab.schema.json", """
            {"name": "Lab", "tables": [{"name": "Samples", "data": "samples.csv",
              "fields": [{"name": "Id", "type": "integer", "primaryKey": true}, {"name": "Label", "type": "string", "size": 20}]}]}
            """)
        _ = try folder.write("lab/samples.csv", "Id,Label\n1,first\n2,second\n")
        let usersFile = try String(contentsOfFile: RelataProcess.packageRoot.appendingPathComponent("Examples/PCTrade/users.json").path, encoding: .utf8)
        _ = try folder.write("shop-users.json", usersFile)
        let demoHash = try #require(usersFile.range(of: #"\$2b\$[^"]+"#, options: .regularExpression).map { String(usersFile[$0]) })
        let config = try folder.write("server.json", """
            {"port": 0, "domains": [
              {"name": "Shop", "usersFile": "shop-users.json",
               "schemas": [{"schema": "\(RelataProcess.pcTradeSchema)", "database": "shop.sqlite",
                            "permissions": {"Clients": {"read": ["Sales"]}, "*": {"read": ["*"]}}}]},
              {"name": "Lab", "users": [{"name": "tech", "passwordHash": "\(demoHash)", "roles": ["Tech"], "values": {"Bench": 4}}],
               "schemas": [{"schema": "lab/Lab.schema.json"}]}
            ]}
            """)
        let server = try await Server(["--config", config])
        #expect(server.port > 0)
        let (_, lab) = try await server.post("/v2/LoginService/Login", #"{"loginString": "User=tech;Password=demo;Domain=Lab"}"#)
        let labToken = try #require(lab["token"] as? String)
        let (status, samples) = try await server.post("/v2/DataService/GetData", #"{"requests": [{"table": "Samples", "parameters": {}}]}"#, token: labToken)
        #expect(status == 200)
        #expect(((samples["tables"] as? [[String: Any]])?.first?["rows"] as? [Any])?.count == 2)
        let (otherDomain, _) = try await server.post("/v2/DataService.PCTrade/GetSchema", "{}", token: labToken)
        #expect(otherDomain == 404, "a Lab session does not reach the Shop's schemas")
        let (wrongDomain, _) = try await server.post("/v2/LoginService/Login", #"{"loginString": "User=tech;Password=demo;Domain=Shop"}"#)
        #expect(wrongDomain == 401)

        let (_, clerk) = try await server.post("/v2/LoginService/Login", #"{"loginString": "User=clerk;Password=clerk;Domain=Shop"}"#)
        let clerkToken = try #require(clerk["token"] as? String)
        let (denied, answer) = try await server.post("/v2/DataService/GetData", #"{"requests": [{"table": "Clients", "parameters": {}}]}"#, token: clerkToken)
        #expect(denied == 403)
        #expect((answer["error"] as? [String: Any])?["code"] as? String == "permissionDenied")
        let (allowed, _) = try await server.post("/v2/DataService/GetData", #"{"requests": [{"table": "Products", "parameters": {}}]}"#, token: clerkToken)
        #expect(allowed == 200)
        #expect(await server.stop() == 0)
    }

    @Test func aMisspeltConfigurationKeyIsNamed() async throws {
        let folder = try TemporaryFolder()
        let config = try folder.write("server.json", #"{"domains": [{"name": "A", "schemas": [{"schema": "x.json", "permisions": {}}]}]}"#)
        let run = try await RelataProcess.run(["serve", "--config", config])
        #expect(run.status == 2)
        #expect(run.errorOutput.contains("domains[0].schemas[0].permisions: unknown key 'permisions' (did you mean 'permissions'?)"), "\(run.errorOutput)")
        let twice = try folder.write("twice.json", """
            {"domains": [{"name": "A", "schemas": [{"schema": "\(RelataProcess.pcTradeSchema)"}, {"schema": "\(RelataProcess.pcTradeSchema)"}]}]}
            """)
        let clash = try await RelataProcess.run(["serve", "--config", twice])
        #expect(clash.status == 2)
        #expect(clash.errorOutput.contains("both have a table Clients in"), "\(clash.errorOutput)")
    }
}

extension ServeCommandTests {
    /// A schema whose tables changed since the database was made: the server refuses to start,
    /// naming the difference (every request on the table failed before, with SQLite's words).
    @Test func aServerRefusesToStartOnADatabaseThatLacksAField() async throws {
        let folder = try TemporaryFolder()
        let fields = #"{"name": "Id", "type": "integer", "primaryKey": true}, {"name": "Title", "type": "string", "size": 40}"#
        let schema = try folder.write("Lab.schema.json", #"{"name": "Lab", "tables": [{"name": "Books", "fields": [\#(fields)]}]}"#)
        let database = folder.url.appendingPathComponent("lab.sqlite").path
        let first = try await Server([schema, "--port", "0", "--database", database])
        #expect(first.port > 0)
        #expect(await first.stop() == 0)
        _ = try folder.write("Lab.schema.json", #"{"name": "Lab", "tables": [{"name": "Books", "fields": [\#(fields), {"name": "Year", "type": "integer"}]}]}"#)
        let second = try await Server([schema, "--port", "0", "--database", database])
        #expect(second.port == 0, "it does not listen")
        #expect(await second.stop() == 2)
        #expect(second.errorOutput.contains("the database does not match the schema Lab (1 difference)"), "\(second.errorOutput)")
        #expect(second.errorOutput.contains(#"Books.Year: the database has no such column; add it with relata migrate, or: ALTER TABLE "Books" ADD COLUMN "Year" INTEGER"#))

        // relata migrate shows, then makes, the change; the server starts then.
        let dryRun = try await RelataProcess.run(["migrate", schema, "--database", database, "--dry-run"])
        #expect(dryRun.status == 0, "\(dryRun.errorOutput)")
        #expect(dryRun.output.contains(#"ALTER TABLE "Books" ADD COLUMN "Year" INTEGER;"#), "\(dryRun.output)")
        #expect(dryRun.output.contains("1 statement(s) would run on \(database) (--dry-run: nothing was changed)"))
        let migrated = try await RelataProcess.run(["migrate", schema, "--database", database])
        #expect(migrated.status == 0, "\(migrated.errorOutput)")
        #expect(migrated.output.contains("migrated \(database): 1 statement(s) in one transaction"))
        let third = try await Server([schema, "--port", "0", "--database", database])
        #expect(third.port > 0, "it starts on the migrated database")
        #expect(await third.stop() == 0)
        let again = try await RelataProcess.run(["migrate", schema, "--database", database])
        #expect(again.output.contains("matches the schema already; nothing to do"))

        // A change that is not additive is refused, naming it; nothing changes.
        _ = try folder.write("Lab.schema.json", #"{"name": "Lab", "tables": [{"name": "Books", "fields": [{"name": "Id", "type": "integer", "primaryKey": true}, {"name": "Title", "type": "integer"}, {"name": "Year", "type": "integer"}]}]}"#)
        let retype = try await RelataProcess.run(["migrate", schema, "--database", database])
        #expect(retype.status == 2)
        #expect(retype.errorOutput.contains("Books.Title: the column is TEXT, the field is integer"), "\(retype.errorOutput)")
        #expect(retype.errorOutput.contains("nothing was changed"))

        // A database that cannot be reached is 4, as a server that cannot be (retrying may work).
        let unreachable = try await RelataProcess.run(["migrate", schema, "--database", "postgres://relata:x@127.0.0.1:1/lab"])
        #expect(unreachable.status == 4)
        #expect(unreachable.errorOutput.contains("the database could not be reached: could not connect to PostgreSQL"), "\(unreachable.errorOutput)")
    }

    @Test func editedRulesAreServedWithoutARestart() async throws {
        let folder = try TemporaryFolder()
        let schema = try folder.write("Lab.schema.json", """
            {"name": "Lab", "tables": [{"name": "Samples", "data": "samples.csv", "script": "Samples.js",
              "fields": [{"name": "Id", "type": "integer", "primaryKey": true}, {"name": "Label", "type": "string", "size": 20}]}]}
            """)
        _ = try folder.write("samples.csv", "Id,Label\n1,first\n")
        let script = try folder.write("Samples.js", "function beforePost(row) {}\n")
        let usersFile = try String(contentsOfFile: RelataProcess.packageRoot.appendingPathComponent("Examples/PCTrade/users.json").path, encoding: .utf8)
        _ = try folder.write("users.json", usersFile)
        let server = try await Server([schema, "--port", "0", "--database", folder.url.appendingPathComponent("lab.sqlite").path])
        #expect(server.port > 0)
        let (_, login) = try await server.post("/v2/LoginService/Login", #"{"loginString": "User=demo;Password=demo"}"#)
        let token = try #require(login["token"] as? String)
        func version() async throws -> String? {
            try await server.post("/v2/DataService/GetSchema", "{}", token: token).1["version"] as? String
        }
        let first = try await version()
        try Data("function beforePost(row) { if (row.Label === 'bad') fail('no bad labels'); }\n".utf8).write(to: URL(fileURLWithPath: script))
        var second = first
        for _ in 0..<40 where second == first {
            try await Task.sleep(for: .milliseconds(250))
            second = try await version()
        }
        #expect(second != first, "the new rules are served")
        let update = #"{"deltas": [{"tableName": "Samples", "keyFields": ["Id"], "loggedFields": ["Id", "Label"], "changes": [{"changeId": 1, "type": "update", "status": "pending", "refreshedValues": {}, "oldValues": {"Id": {"integer": 1}, "Label": {"string": "first"}}, "newValues": {"Label": {"string": "bad"}}}]}]}"#
        let (_, answer) = try await server.post("/v2/DataService/UpdateData", update, token: token)
        let change = ((answer["deltas"] as? [[String: Any]])?.first?["changes"] as? [[String: Any]])?.first
        #expect(change?["message"] as? String == "no bad labels")
        #expect(await server.stop() == 0)
    }

    /// The users file reloads while the server runs: a user removed from it, or given other roles,
    /// loses his sessions within seconds and cannot log in with the old ones; the others keep theirs.
    /// A users file that does not load leaves the users as they were.
    @Test func aUserRemovedFromTheUsersFileOrGivenOtherRolesLosesHisSessions() async throws {
        let folder = try TemporaryFolder()
        let schema = try folder.write("Lab.schema.json", """
            {"name": "Lab", "tables": [{"name": "Samples", "fields": [{"name": "Id", "type": "integer", "primaryKey": true}]}]}
            """)
        let users = try JSONSerialization.jsonObject(with: Data(contentsOf: RelataProcess.packageRoot.appendingPathComponent("Examples/PCTrade/users.json"))) as? [[String: Any]] ?? []
        let demo = try #require(users.first { $0["name"] as? String == "demo" }), clerk = try #require(users.first { $0["name"] as? String == "clerk" })
        let usersFile = URL(fileURLWithPath: try folder.write("users.json", String(decoding: try JSONSerialization.data(withJSONObject: users), as: UTF8.self)))
        let server = try await Server([schema, "--port", "0", "--users", usersFile.path, "--database", folder.url.appendingPathComponent("lab.sqlite").path])
        #expect(server.port > 0)
        func login(_ name: String) async throws -> String? {
            try await server.post("/v2/LoginService/Login", #"{"loginString": "User=\#(name);Password=\#(name)"}"#).1["token"] as? String
        }
        func isOpen(_ token: String) async throws -> Bool {
            try await server.post("/v2/DataService/GetSchema", "{}", token: token).0 == 200
        }
        let demoToken = try #require(try await login("demo")), clerkToken = try #require(try await login("clerk"))

        // A file that does not load changes nothing.
        try Data("[{\"name\": \"demo\"".utf8).write(to: usersFile)
        #expect(await server.waitForLog("were not reloaded", within: .seconds(30)), "\(server.errorOutput)")
        #expect(try await isOpen(demoToken))

        // demo goes; clerk gets another role.
        var promoted = clerk
        promoted["roles"] = ["Clerk", "Manager"]
        try JSONSerialization.data(withJSONObject: [promoted]).write(to: usersFile)
        var ended = false
        for _ in 0..<120 where !ended {   // the server checks sessions every 5 s; 30 s at most here
            try await Task.sleep(for: .milliseconds(250))
            let demoOpen = try await isOpen(demoToken), clerkOpen = try await isOpen(clerkToken)
            ended = !demoOpen && !clerkOpen
        }
        #expect(ended, "both sessions ended: \(server.errorOutput)")
        #expect(try await login("demo") == nil, "demo can no longer log in")
        let again = try #require(try await login("clerk"), "clerk logs in again, with his new roles")
        #expect(try await isOpen(again))
        _ = demo
        #expect(await server.stop() == 0)
        #expect(server.errorOutput.contains("reloaded the users of the server"))
    }
}

extension ServeCommandTests {
    /// A server on PostgreSQL (`--config`, sessions there too) closes its connections when it
    /// stops — no crash — and stops within seconds even after its database has gone.
    @Test(.timeLimit(.minutes(5)))
    func aServerOnPostgreSQLStopsCleanlyEvenWhenItsDatabaseIsGone() async throws {
        let folder = try TemporaryFolder()
        let (url, drop) = try TestPostgres.makeDatabaseURL()
        let dropped = ConditionFlag()
        defer { if !dropped.isSet { drop() } }
        let config = try folder.write("server.json", """
            {"port": 0, "sessions": "\(url)", "domains": [
              {"name": "Shop", "usersFile": "\(RelataProcess.packageRoot.appendingPathComponent("Examples/PCTrade/users.json").path)",
               "schemas": [{"schema": "\(RelataProcess.pcTradeSchema)", "database": "\(url)"}]}]}
            """)
        let login = #"{"loginString": "User=demo;Password=demo"}"#
        let read = #"{"requests": [{"table": "Clients", "parameters": {}}]}"#
        let server = try await Server(["--config", config])
        try #require(server.port > 0)
        let (_, answer) = try await server.post("/v2/LoginService/Login", login)
        let token = try #require(answer["token"] as? String)
        #expect(try await server.post("/v2/DataService/GetData", read, token: token).0 == 200)
        #expect(await server.stop() == 0, "SIGTERM stops it gracefully")
        #expect(!server.errorOutput.contains("deinitialized before being closed"))

        let again = try await Server(["--config", config])
        try #require(again.port > 0)
        let (_, second) = try await again.post("/v2/LoginService/Login", login)
        let secondToken = try #require(second["token"] as? String)
        drop()
        dropped.set()
        #expect(await TestPostgres.waitUntilGone(url), "the database was dropped")
        // The database is gone: requests fail (they do not hang), and the server still stops.
        let (status, _) = try await again.post("/v2/DataService/GetData", read, token: secondToken)
        #expect(status >= 500 || status == 401, "status \(status)")
        let started = ContinuousClock.now
        #expect(await again.stop() == 0)
        #expect(ContinuousClock.now - started < .seconds(30))
    }
}

extension ServeCommandTests {
    /// `--log-format json` writes one JSON object per line; `--log-level` leaves out what is less
    /// important; the start, the stop, logins and a refused start are audit events.
    @Test func theLogIsJSONLinesAtTheChosenLevelWithAuditEvents() async throws {
        let folder = try TemporaryFolder()
        let database = folder.url.appendingPathComponent("pc.sqlite").path
        let server = try await Server(["--port", "0", "--database", database, "--log-format", "json", "--log-level", "notice"])
        #expect(server.port > 0)
        let (wrong, _) = try await server.post("/v2/LoginService/Login", #"{"loginString": "User=demo;Password=nope"}"#)
        #expect(wrong == 401)
        // The helper's `--rule-runtimes 2` is what the schema's pool has.
        let (metrics, _) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(server.port)/metrics")!)
        #expect(String(decoding: metrics, as: UTF8.self).contains(#"relata_rule_runtimes{domain="default",schema="PCTrade"} 2"#))
        #expect(await server.waitForLog("login.failed", within: .seconds(10)))
        #expect(await server.stop() == 0)
        let lines = server.errorOutput.split(separator: "\n").map(String.init)
        let events = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(events.count == lines.count, "every line is a JSON object: \(lines.filter { !$0.hasPrefix("{") })")
        let audits = events.compactMap { $0["audit"] as? String }
        #expect(audits.first == "server.started" && audits.last == "server.stopped", "\(audits)")
        #expect(audits.contains("login.failed"))
        let failed = try #require(events.first { $0["audit"] as? String == "login.failed" })
        #expect(failed["user"] as? String == "demo" && failed["level"] as? String == "warning" && failed["time"] is String)
        #expect(!lines.contains { $0.contains("POST /v2/LoginService/Login") }, "request lines are info, below notice")

        let refused = try await RelataProcess.run(["serve", "/nonexistent/s.schema.json", "--port", "0", "--log-format", "json"])
        #expect(refused.status == 2)
        let line = try #require(refused.errorOutput.split(separator: "\n").last)
        let event = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(event["audit"] as? String == "start.refused")
        #expect(event["level"] as? String == "critical")
        #expect((event["message"] as? String)?.contains("the schema file does not exist") == true)

        let badLevel = try await RelataProcess.run(["serve", "--log-level", "loud"])
        #expect(badLevel.status == 64)
    }
}

import Foundation
import Relata
import RelataRemote
import RelataServerTestSupport
import Testing
import RelataTestSupport

/// The client against a real `relata serve` process that is killed while it applies.
@Suite(.serialized, .timeLimit(.minutes(10))) struct ServerKilledTests {
    /// What the slow `beforeCommit` logs before it dawdles.
    static let killLine = "beforeCommit: kill the server now"

    /// What the slow `afterCommit` logs: the apply is stored, its answer not sent yet.
    static let committedLine = "afterCommit: kill the server now"

    /// PCTrade in a folder of its own, with a `beforeCommit` (or `afterCommit`) that says so in the
    /// server's log and then takes 700 ms: the test kills the server when it reads that line.
    static func slowCommitSchema(in folder: TemporaryFolder, event: String = "beforeCommit") throws -> String {
        let source = RelataProcess.packageRoot.appendingPathComponent("Examples/PCTrade")
        let copy = folder.url.appendingPathComponent("PCTrade")
        try FileManager.default.copyItem(at: source, to: copy)
        let script = copy.appendingPathComponent("rules/schema.js")
        try """
            function \(event)() {
                log('\(event == "beforeCommit" ? killLine : committedLine)');
                const start = Date.now();
                while (Date.now() - start < 700) {}
            }
            """.write(to: script, atomically: true, encoding: .utf8)
        return copy.appendingPathComponent("PCTrade.schema.json").path
    }

    /// Applies while the server is killed in `beforeCommit`: the apply fails as transient.
    static func apply(_ table: DataTable, through adapter: RemoteDataAdapter, killing server: ServeCommandTests.Server,
                      sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let killed = server.kill(whenLogged: killLine)
        do {
            try await adapter.applyChanges(for: table)
            Issue.record("the apply succeeded on a killed server", sourceLocation: sourceLocation)
        } catch let error as RemoteError {
            #expect(error.kind == .transient, "\(error)", sourceLocation: sourceLocation)
            #expect(error.isRetryable, sourceLocation: sourceLocation)
        }
        #expect(killed.isSet, "the server was killed in beforeCommit", sourceLocation: sourceLocation)
    }

    @Test func aServerKilledMidApplyLeavesEveryChangePendingAndARetrySucceeds() async throws {
        let folder = try TemporaryFolder()
        let schema = try Self.slowCommitSchema(in: folder)
        let database = folder.url.appendingPathComponent("pctrade.sqlite").path
        var server = try await ServeCommandTests.Server([schema, "--port", "0", "--database", database])
        let port = server.port
        try #require(port > 0)
        let adapter = RemoteDataAdapter(targetURL: URL(string: "http://127.0.0.1:\(port)")!, dataService: "DataService.PCTrade")
        adapter.credentials = RemoteCredentials(user: "demo", password: "demo")
        let clients = try await adapter.getDataTable("Clients")
        let row = clients.rows[0]
        let before = row["ClientName"]
        try row.setValue("Typed before the crash", forKey: "ClientName")

        adapter.applyRetries = ApplyRetryPolicy(attempts: 2, firstDelay: .milliseconds(50))
        try await Self.apply(clients, through: adapter, killing: server)
        #expect(row.rowState == .modified && row.isLocked && row.failureMessage == nil)
        #expect(adapter.unansweredApply != nil, "the batch waits for its answer")
        #expect(row["ClientName"] == "Typed before the crash")
        #expect(row.originalValue(forKey: "ClientName") == before)

        // The same database on the same port: nothing was applied, and the retry is.
        server = try await ServeCommandTests.Server([schema, "--port", "\(port)", "--database", database])
        try #require(server.port == port)
        let fresh = RemoteDataAdapter(targetURL: URL(string: "http://127.0.0.1:\(port)")!, dataService: "DataService.PCTrade")
        fresh.credentials = adapter.credentials
        #expect(try await fresh.getDataTable("Clients").rows[0]["ClientName"] == before, "the killed transaction rolled back")
        let delta = try await adapter.applyChanges(for: clients)
        #expect(delta.changes.map(\.status) == [.resolved])
        #expect(row.rowState == .unchanged)
        #expect(try await fresh.getDataTable("Clients").rows[0]["ClientName"] == "Typed before the crash")
        _ = await server.stop()
    }
}

extension ServerKilledTests {
    /// The server is killed after its commit and before its answer: the apply is stored and the
    /// client cannot know. Its next apply sends the batch again, with its id, to the restarted
    /// server, which answers from its record: one row.
    @Test(arguments: StorageBackend.allCases)
    func aServerKilledAfterItsCommitAnswersTheRetryFromItsRecord(backend: StorageBackend) async throws {
        let folder = try TemporaryFolder()
        let schema = try Self.slowCommitSchema(in: folder, event: "afterCommit")
        var database = folder.url.appendingPathComponent("pctrade.sqlite").path
        var drop: @Sendable () -> Void = {}
        if backend == .postgres { (database, drop) = try TestPostgres.makeDatabaseURL() }
        defer { drop() }
        var server = try await ServeCommandTests.Server([schema, "--port", "0", "--database", database])
        let port = server.port
        try #require(port > 0)
        let adapter = RemoteDataAdapter(targetURL: URL(string: "http://127.0.0.1:\(port)")!, dataService: "DataService.PCTrade")
        adapter.credentials = RemoteCredentials(user: "demo", password: "demo")
        adapter.applyRetries = .never
        let clients = try await adapter.getDataTable("Clients")
        let row = try clients.addNewRow(values: ["ClientName": "Killed After Commit", "ContactPhone": "555-0101"])

        let killed = server.kill(whenLogged: Self.committedLine)
        await #expect(throws: RemoteError.self) { try await adapter.applyChanges(for: clients) }
        #expect(killed.isSet, "the server was killed in afterCommit")
        #expect(adapter.unansweredApply != nil && row.isLocked)

        server = try await ServeCommandTests.Server([schema, "--port", "\(port)", "--database", database])
        try #require(server.port == port)
        defer { server.kill() }
        let fresh = RemoteDataAdapter(targetURL: URL(string: "http://127.0.0.1:\(port)")!, dataService: "DataService.PCTrade")
        fresh.credentials = adapter.credentials
        let named = { try await fresh.getDataTable("Clients", where: "ClientName = 'Killed After Commit'").rows.count }
        #expect(try await named() == 1, "the killed server had committed")

        adapter.applyRetries = ApplyRetryPolicy(attempts: 3, firstDelay: .milliseconds(50))
        let delta = try await adapter.applyChanges(for: clients)
        #expect(delta.changes.map(\.status) == [.resolved])
        #expect(adapter.unansweredApply == nil)
        #expect(row.rowState == .unchanged && !row.isLocked)
        #expect(try await named() == 1, "the retry was answered from the record, not applied again")
    }
}

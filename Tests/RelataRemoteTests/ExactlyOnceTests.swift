import Foundation
import Relata
import RelataRemote
import RelataServerTestSupport
import Testing

/// An apply whose answer is lost after the server committed it is sent again with its apply id,
/// and the server answers from its record: one row, on every backend, however the retry comes —
/// from the adapter's own retries, from the next apply, or from an app restarted from its briefcase.
@Suite(.timeLimit(.minutes(10))) struct ExactlyOnceTests {
    static func newClient(in clients: DataTable, named name: String) throws {
        try clients.addNewRow(values: ["ClientName": .string(name), "ContactPhone": "555-0100"])
    }

    static func stored(_ name: String, in server: PCTradeServer) throws -> Int {
        try server.service.storedRows(of: "Clients").filter { $0["ClientName"] == .string(name) }.count
    }

    /// Serves `server` behind a proxy that loses the first `dropping` UpdateData answers, and runs
    /// `body` with an adapter sending through it (`attempts` sends per apply) and its `Clients`.
    static func throughLossyProxy(_ server: PCTradeServer, dropping: Int, attempts: Int,
                                  _ body: nonisolated(nonsending) (AnswerDroppingProxy, RemoteDataAdapter, DataTable) async throws -> Void) async throws {
        try await server.serve { url in
            let proxy = try AnswerDroppingProxy(upstreamPort: try #require(url.port), dropping: dropping)
            defer { proxy.stop() }
            let adapter = demoAdapter(proxy.url)
            adapter.applyRetries = ApplyRetryPolicy(attempts: attempts, firstDelay: .milliseconds(20))
            try await body(proxy, adapter, try await adapter.getDataTable("Clients"))
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func anAnswerLostAfterTheCommitIsSentAgainAndStoredOnce(backend: StorageBackend) async throws {
        let server = try PCTradeServer(backend: backend)
        try await Self.throughLossyProxy(server, dropping: 1, attempts: 3) { proxy, adapter, clients in
            try Self.newClient(in: clients, named: "Retry Corp")
            let delta = try await adapter.applyChanges(for: clients)
            #expect(delta.changes.map(\.status) == [.resolved])
            #expect(proxy.updateDataRequests == 2, "the first answer was lost, the batch went again")
            #expect(proxy.updateDataContentTypes == [DeltaBinary.contentType, DeltaBinary.contentType],
                    "both attempts in the binary form the server said it reads")
            #expect(adapter.unansweredApply == nil)
            #expect(try Self.stored("Retry Corp", in: server) == 1)
            let row = try #require(clients.rows.last)
            #expect(row.rowState == .unchanged && !row.isLocked)
            #expect((row["ClientId"].integerValue ?? -1) > 0, "the row has the key the server gave the first time")
        }
    }

    /// A server that does not say it reads the binary form (one from before it) gets JSON, and
    /// its retry too; the adapter's applies work the same.
    @Test func aServerThatDoesNotListTheBinaryFormGetsJSON() async throws {
        let server = try PCTradeServer()
        try await server.serve { url in
            let proxy = try AnswerDroppingProxy(upstreamPort: try #require(url.port), dropping: 1)
            defer { proxy.stop() }
            proxy.hidesAcceptPost = true
            let adapter = demoAdapter(proxy.url)
            adapter.applyRetries = ApplyRetryPolicy(attempts: 3, firstDelay: .milliseconds(20))
            let clients = try await adapter.getDataTable("Clients")
            try Self.newClient(in: clients, named: "Plain Corp")
            #expect(try await adapter.applyChanges(for: clients).changes.map(\.status) == [.resolved])
            #expect(proxy.updateDataContentTypes == ["application/json", "application/json"])
            #expect(try Self.stored("Plain Corp", in: server) == 1)
            // The same server once it lists the form: the next apply goes in it.
            proxy.hidesAcceptPost = false
            try Self.newClient(in: clients, named: "Binary Corp")
            #expect(try await adapter.applyChanges(for: clients).changes.map(\.status) == [.resolved])
            #expect(proxy.updateDataContentTypes.last == "application/json", "learned from that apply's answer, not before it")
            try Self.newClient(in: clients, named: "Binary Corp 2")
            #expect(try await adapter.applyChanges(for: clients).changes.map(\.status) == [.resolved])
            #expect(proxy.updateDataContentTypes.last == DeltaBinary.contentType)
            #expect(try Self.stored("Binary Corp", in: server) == 1 && Self.stored("Binary Corp 2", in: server) == 1)
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func aBatchStillUnansweredGoesFirstAtTheNextApply(backend: StorageBackend) async throws {
        let server = try PCTradeServer(backend: backend)
        try await Self.throughLossyProxy(server, dropping: 2, attempts: 2) { proxy, adapter, clients in
            try Self.newClient(in: clients, named: "Patient Corp")
            await #expect(throws: RemoteError.self) { try await adapter.applyChanges(for: clients) }
            let waiting = try #require(adapter.unansweredApply)
            #expect(try Self.stored("Patient Corp", in: server) == 1, "the server applied it; only the answers were lost")

            // The user goes on: another new row. The next apply learns the first batch's fate, then sends the rest.
            try Self.newClient(in: clients, named: "Later Corp")
            let delta = try await adapter.applyChanges(for: clients)
            #expect(delta.changes.map(\.status) == [.resolved, .resolved])
            #expect(adapter.unansweredApply == nil)
            #expect(proxy.updateDataRequests == 4, "two lost answers, the batch again, then the new batch")
            #expect(try Self.stored("Patient Corp", in: server) == 1)
            #expect(try Self.stored("Later Corp", in: server) == 1)
            #expect(waiting.deltas.flatMap(\.changes).count == 1)
            #expect(clients.rows.allSatisfy { $0.rowState == .unchanged && !$0.isLocked })
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func anAppRestartedFromItsBriefcaseSendsTheBatchAgainAndStoresItOnce(backend: StorageBackend) async throws {
        let server = try PCTradeServer(backend: backend)
        let file = server.folder.appendingPathComponent("app.briefcase")
        try await server.serve { url in
            let proxy = try AnswerDroppingProxy(upstreamPort: try #require(url.port), dropping: 1)
            defer { proxy.stop() }
            do {
                let adapter = demoAdapter(proxy.url)
                adapter.applyRetries = .never
                let clients = try await adapter.getDataTable("Clients")
                try Self.newClient(in: clients, named: "Restart Corp")
                await #expect(throws: RemoteError.self) { try await adapter.applyChanges(for: clients) }
                #expect(adapter.unansweredApply != nil)
                try adapter.makeBriefcase().save(to: file)
            }   // the app quits

            let restarted = demoAdapter(proxy.url)
            try restarted.load(Briefcase(contentsOf: file))
            let clients = try #require(restarted.table(named: "Clients"))
            let row = try #require(clients.rows.last)
            #expect(row["ClientName"] == "Restart Corp")
            #expect(row.isLocked, "the batch's rows stay locked across the restart")
            #expect(restarted.unansweredApply != nil)
            let delta = try await restarted.applyChanges(for: clients)
            #expect(delta.changes.map(\.status) == [.resolved])
            #expect(try Self.stored("Restart Corp", in: server) == 1)
            #expect(row.rowState == .unchanged && !row.isLocked)
            #expect((row["ClientId"].integerValue ?? -1) > 0)
        }
    }

    /// A batch large enough to be encoded on the client while it is validated, and fingerprinted
    /// on the server while it is replayed (``changesWorthAThread``): its lost answer comes from the
    /// record, each row stored once, and the change the client's validation refused never went.
    @Test(arguments: StorageBackend.allCases)
    func aLargeBatchMadeMeanwhileIsStoredOnceWithoutWhatValidationRefused(backend: StorageBackend) async throws {
        let server = try PCTradeServer(backend: backend) { schema in
            let index = try #require(schema.tables.firstIndex { $0.name == "Clients" })
            schema.tables[index].script?.source += "\nfunction beforeProcessDeltaChange(delta, change) { if (change.newValues.ClientName === 'Refused Corp') fail('not that one'); }\n"
        }
        try await Self.throughLossyProxy(server, dropping: 1, attempts: 3) { proxy, adapter, clients in
            let count = changesWorthAThread + 100
            for number in 1...count { try Self.newClient(in: clients, named: "Bulk \(number)") }
            try Self.newClient(in: clients, named: "Refused Corp")
            try Self.newClient(in: clients, named: "Bulk last")

            let delta = try await adapter.applyChanges(for: clients)
            #expect(delta.changes.count == count + 2)
            #expect(delta.failedChanges.map(\.message) == ["not that one"], "refused here, before anything was sent")
            #expect(proxy.updateDataRequests == 2, "the first answer was lost, the batch went again")
            #expect(proxy.updateDataContentTypes == [DeltaBinary.contentType, DeltaBinary.contentType])
            let bodies = proxy.updateDataBodies
            #expect(bodies.count == 2 && bodies[0] == bodies[1], "the retry sends the same bytes")
            let sent = try DeltaBinary.decodeRequest(try #require(bodies.first))
            #expect(sent.deltas.flatMap(\.changes).count == count + 1, "all but the refused change")
            #expect(sent.deltas.flatMap(\.changes).allSatisfy { $0.newValues["ClientName"] != "Refused Corp" })
            #expect(adapter.unansweredApply == nil)
            let stored = try server.service.storedRows(of: "Clients").compactMap { $0["ClientName"]?.stringValue }
            #expect(stored.filter { $0.hasPrefix("Bulk ") }.count == count + 1 && Set(stored).count == stored.count, "each row stored once")
            #expect(!stored.contains("Refused Corp"))
            #expect(clients.rows.filter { $0.rowState != .unchanged }.map { $0["ClientName"] } == ["Refused Corp"], "nothing typed is lost")
        }
    }
}

import Foundation
import Relata
@testable import RelataServer
import RelataServerTestSupport
import RelataTestSupport
import Testing

/// Nothing waits on PostgreSQL for ever: an answer that never comes, a pool whose connections
/// are all lent, a database that was closed — each fails within its limit, clearly.
@Suite(.timeLimit(.minutes(3))) struct PostgresLimitsTests {
    static func database(maxConnections: Int, limits: PostgresTimeLimits) throws -> (PostgresDatabase, @Sendable () -> Void) {
        let (url, drop) = try TestPostgres.makeDatabaseURL()
        return (try PostgresDatabase(url: url, maxConnections: maxConnections, limits: limits), drop)
    }

    /// What `work` returned or threw.
    static func outcome<Value: Sendable>(_ work: () async throws -> Value) async -> Result<Value, any Error> {
        do {
            return .success(try await work())
        } catch {
            return .failure(error)
        }
    }

    /// The network between Relata and PostgreSQL stops carrying anything (a relay that swallows
    /// every byte): PostgreSQL never sees the statement, so its own limit cannot end it, and the
    /// answer never comes. The wait ends at the statement's limit and a grace, the connection is
    /// closed, and the next unit of work gets a new one.
    @Test func aStatementWhoseAnswerNeverComesFailsWithinItsLimit() async throws {
        let (url, drop) = try TestPostgres.makeDatabaseURL()
        defer { drop() }
        var components = try #require(URLComponents(string: url))
        let relay = try TCPRelay(to: try #require(components.port))
        defer { relay.close() }
        components.port = relay.port
        let database = try PostgresDatabase(url: try #require(components.string), maxConnections: 1,
                                            limits: PostgresTimeLimits(statement: .seconds(1)))
        defer { database.close() }
        let started = ContinuousClock.now
        // Seconds of blocking: on a thread of its own, not one of the few the other tests share.
        let outcome = await Self.outcome { try await OffCooperativePool.run {
            try database.write { connection in
                try connection.execute("SELECT 1", [])
                relay.blackHole()
                try connection.execute("SELECT 2", [])
            }
        } }
        #expect(throws: SQLError.self) { try outcome.get() }
        if case .failure(let error) = outcome {
            #expect((error as? SQLError)?.kind == .unavailable && "\(error)".contains("did not answer within"), "\(error)")
        }
        #expect(ContinuousClock.now - started < .seconds(120), "1 s and a 5 s grace, not for ever (room for a busy machine)")
        let again = try await OffCooperativePool.run { try database.read { try $0.value("SELECT 2", [], reading: FieldDefinition("n", .integer)) } }
        #expect(again == 2, "the broken connection is not lent again")
    }

    /// Every connection lent for longer than the acquire limit: the next unit of work is
    /// refused (503 on the wire) instead of waiting in line for ever.
    @Test func aPoolWhoseConnectionsStayLentRefusesAfterTheAcquireLimit() async throws {
        let (database, drop) = try Self.database(maxConnections: 1, limits: PostgresTimeLimits(acquire: .milliseconds(300)))
        defer {
            database.close()
            drop()
        }
        let holding = ConditionFlag(), done = ConditionFlag()
        defer { done.set() }
        let holder = Thread {
            try? database.read { _ in
                holding.set()
                _ = done.wait(for: .seconds(120))   // until the test is done with it
            }
        }
        holder.start()
        #expect(try await OffCooperativePool.run { holding.wait(for: .seconds(30)) })
        let started = ContinuousClock.now
        let outcome = await Self.outcome { try await OffCooperativePool.run { try database.read { _ in } } }
        #expect(throws: SQLError.self) { try outcome.get() }
        if case .failure(let error) = outcome {
            #expect((error as? SQLError)?.kind == .unavailable && "\(error)".contains("stayed busy"), "\(error)")
        }
        #expect(ContinuousClock.now - started < .seconds(60), "0.3 s, not for ever (room for a busy machine)")
    }

    /// A database of its own with one connection, and one on the server's own database to watch
    /// and end its sessions (`pg_terminate_backend`); `done` closes both and drops the database.
    static func databaseAndWatcher() throws -> (PostgresDatabase, watcher: PostgresDatabase, done: () -> Void) {
        let (url, drop) = try TestPostgres.makeDatabaseURL()
        let database: PostgresDatabase, watcher: PostgresDatabase
        do {
            database = try PostgresDatabase(url: url, maxConnections: 1)
            watcher = try PostgresDatabase(url: try TestPostgres.baseURL, maxConnections: 1)
        } catch {
            drop()
            throw error
        }
        return (database, watcher, {
            database.close()
            watcher.close()
            drop()
        })
    }

    /// PostgreSQL ends the session of a connection waiting in the pool (an administrator's
    /// `pg_terminate_backend`, a restart): the next unit of work, started at once, runs on a new
    /// connection — whether the pool sees the close before lending it, or the close comes while
    /// its transaction starts (nothing of the work had reached the database).
    @Test func aConnectionPostgreSQLEndedWhileIdleIsReplacedUnseen() async throws {
        let (database, watcher, done) = try Self.databaseAndWatcher()
        defer { done() }
        let number = FieldDefinition("n", .integer)
        // Each round: whether the backend was ended, and what the unit of work right after it read.
        let rounds: [(ended: Value?, read: Value?)] = try await OffCooperativePool.run {
            try (0..<20).map { round in
                let pid = try database.read { try $0.value("SELECT pg_backend_pid()", [], reading: number) } ?? .null
                let ended = try watcher.read { try $0.value("SELECT pg_terminate_backend($1::int)::int", [pid], reading: number) }
                return (ended, try database.read { try $0.value("SELECT \(round)", [], reading: number) })
            }
        }
        for (round, outcome) in rounds.enumerated() {
            #expect(outcome.ended == 1, "round \(round): the backend was ended")
            #expect(outcome.read == .integer(Int64(round)), "round \(round)")
        }
    }

    /// PostgreSQL ends a read's session after the read's transaction began and a statement of it
    /// ran: nothing a read-only transaction sends can change the database, so the read starts
    /// again on a new connection and its caller sees only the answer. A write whose statement went
    /// out is not started again: it fails as unavailable (its apply may be retried by the client).
    @Test func aReadWhoseSessionEndsMidwayStartsAgainButAWriteDoesNot() async throws {
        let (database, watcher, done) = try Self.databaseAndWatcher()
        defer { done() }
        let number = FieldDefinition("n", .integer)
        /// Ends the session of `connection` and runs statements on it until one fails (at most 30 s).
        @Sendable func endSession(of connection: any SQLConnection) throws {
            let pid = try connection.value("SELECT pg_backend_pid()", [], reading: number) ?? .null
            _ = try watcher.read { try $0.value("SELECT pg_terminate_backend($1::int)::int", [pid], reading: number) }
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline {
                try connection.execute("SELECT 1", [])
            }
        }
        let (starts, read, write): (Int, Value?, Result<Void, any Error>) = try await OffCooperativePool.run {
            var starts = 0
            let read = try database.read { connection -> Value? in
                starts += 1
                if starts == 1 { try endSession(of: connection) }
                return try connection.value("SELECT 42", [], reading: number)
            }
            var writeStarts = 0
            let write = Result {
                try database.write { connection in
                    writeStarts += 1
                    try connection.begin()
                    try connection.execute("CREATE TABLE t (n integer)", [])
                    try endSession(of: connection)
                }
            }
            #expect(writeStarts == 1, "a write whose change went out is not started again")
            return (starts, read, write)
        }
        #expect(starts == 2, "the read started once more, on another connection")
        #expect(read == 42)
        #expect(throws: SQLError.self) { try write.get() }
        if case .failure(let error) = write {
            #expect((error as? SQLError)?.kind == .unavailable, "\(error)")
        }
    }

    @Test func aClosedDatabaseLendsNothing() throws {
        let (database, drop) = try Self.database(maxConnections: 2, limits: PostgresTimeLimits())
        defer { drop() }
        database.close()
        #expect { try database.read { _ in } } throws: { error in
            (error as? SQLError)?.kind == .unavailable && "\(error)".contains("closed")
        }
    }

    /// A schema the database refuses (a foreign key to a column that is not unique) is an error,
    /// and the database let go without `close()` closes its connections — no crash.
    @Test func aSchemaThePostgreSQLRefusesIsAnErrorAndItsConnectionsClose() async throws {
        let (url, drop) = try TestPostgres.makeDatabaseURL()
        defer { drop() }
        let schema = try SchemaDefinition(name: "Bad", tables: [
            TableDefinition(name: "People", fields: [FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("Name", .string)]),
            TableDefinition(name: "Pets", fields: [FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("Owner", .string)],
                            foreignKeys: [ForeignKeyDefinition(field: "Owner", references: "People", referencedField: "Name")]),
        ])
        let name = try #require(URLComponents(string: url)?.path.dropFirst()).description
        try await OffCooperativePool.run {
            let database = try PostgresDatabase(url: url)
            #expect(throws: SQLError.self) { try SQLStorage(database: database, schema: schema) }
        }
        let watcher = try PostgresDatabase(url: try TestPostgres.baseURL, maxConnections: 1)
        defer { watcher.close() }
        let count = FieldDefinition("n", .integer)
        var open: Value?
        for _ in 0..<600 {   // at most a minute
            open = try await OffCooperativePool.run {
                try watcher.read { try $0.value("SELECT COUNT(*) FROM pg_stat_activity WHERE datname = $1", [.string(name)], reading: count) }
            }
            if open == 0 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(open == 0, "the connection of the database let go is closed")
    }
}

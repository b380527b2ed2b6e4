import Foundation
import Logging
import RelataServer
import RelataTestSupport

/// The databases the server suite runs on: every test that takes a backend runs once per backend.
public enum StorageBackend: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite, postgres

    public var description: String { rawValue }

    /// A fresh, empty database of this backend; `cleanup` removes it.
    ///
    /// PostgreSQL comes from `RELATA_POSTGRES_URL` (`Scripts/test.sh` starts a throwaway cluster
    /// and sets it): each call makes a database of its own there. Without it the test fails
    /// with a message saying so — it is never skipped.
    /// `readers`: the reads that may run at once (SQLite's readers, PostgreSQL's connections).
    public func makeDatabase(in folder: URL, readers: Int = 4) throws -> (database: any SQLDatabase, cleanup: @Sendable () -> Void) {
        let (databases, cleanup) = try makeSharedDatabase(connections: 1, in: folder, readers: readers)
        return (databases[0], cleanup)
    }

    /// One fresh database opened `connections` times, as that many server instances would open it.
    public func makeSharedDatabase(connections: Int, in folder: URL, readers: Int = 4) throws -> (databases: [any SQLDatabase], cleanup: @Sendable () -> Void) {
        switch self {
        case .sqlite:
            let path = folder.appendingPathComponent("shop.sqlite").path
            // Commits that do not wait for the disk: a test's file outlives no power cut, and a
            // sync per commit, waited for on Swift's few cooperative threads by the many tests
            // that run at once, holds the others up for seconds. `SQLiteDurabilityTests` and
            // `SQLiteGroupCommitTests` keep the default.
            return (try (0..<connections).map { _ in try SQLiteDatabase(path: path, synchronous: false, maxReaders: readers) }, {})
        case .postgres:
            return try TestPostgres.makeDatabase(connections: connections, maxConnections: readers)
        }
    }

    /// The sessions a test server keeps: in the PostgreSQL database itself (as instances share
    /// them), in memory beside a SQLite file.
    public func makeSessions(in database: any SQLDatabase) throws -> SessionStore {
        switch self {
        case .sqlite: try SessionStore(path: ":memory:")
        case .postgres: try SessionStore(database: database)
        }
    }

    /// A query of the database's catalog: the column names of a table, in order.
    public func columnNamesQuery(table: String) -> String {
        switch self {
        case .sqlite: "SELECT name FROM pragma_table_info('\(table)') ORDER BY cid"
        case .postgres: "SELECT column_name::text FROM information_schema.columns WHERE table_name = '\(table)' ORDER BY ordinal_position"
        }
    }

    /// A query of the database's catalog: the names of its tables.
    public var tableNamesQuery: String {
        switch self {
        case .sqlite: "SELECT name FROM sqlite_master WHERE type = 'table'"
        case .postgres: "SELECT table_name::text FROM information_schema.tables WHERE table_schema = current_schema()"
        }
    }
}

/// Databases made for tests on the cluster `RELATA_POSTGRES_URL` names.
public enum TestPostgres {
    public struct NotConfigured: Error, CustomStringConvertible {
        public var description: String {
            "RELATA_POSTGRES_URL is not set: the PostgreSQL tests need a server (Scripts/test.sh starts a throwaway cluster and sets it)"
        }
    }

    public static var baseURL: String {
        get throws {
            guard let url = ProcessInfo.processInfo.environment["RELATA_POSTGRES_URL"], !url.isEmpty else { throw NotConfigured() }
            return url
        }
    }

    /// A database of its own (`relata_test_…`) opened `connections` times, dropped by `cleanup`.
    /// A statement may run for a minute (a server allows five): a test whose statement waits
    /// that long fails naming it rather than holding its thread — maybe one of the few
    /// cooperative ones every test shares — until the suite's time limit.
    public static func makeDatabase(connections: Int, maxConnections: Int = 4) throws -> (databases: [any SQLDatabase], cleanup: @Sendable () -> Void) {
        let (url, drop) = try makeDatabaseURL()
        let databases = try (0..<connections).map { _ in
            try PostgresDatabase(url: url, maxConnections: maxConnections, limits: testLimits, logger: quiet)
        }
        return (databases, {
            for database in databases { database.close() }
            drop()
        })
    }

    /// The URL of a database of its own (`relata_test_…`), for a server process to open; `drop` removes it.
    ///
    /// `drop` returns at once and the database is dropped in the background: PostgreSQL's
    /// `DROP DATABASE` waits until every backend of the cluster has acknowledged it, so a test
    /// that stalls one backend on purpose would otherwise hold up the end of every other test —
    /// on Swift's cooperative threads, which the other tests' servers need.
    public static func makeDatabaseURL() throws -> (url: String, drop: @Sendable () -> Void) {
        let base = try baseURL
        let name = "relata_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let admin = try PostgresDatabase(url: base, maxConnections: 1, limits: adminLimits, logger: quiet)
        do {
            try admin.write { connection in _ = try connection.execute("CREATE DATABASE \(name)", []) }
        } catch {
            admin.close()
            throw error
        }
        guard var components = URLComponents(string: base) else { throw NotConfigured() }
        components.path = "/" + name
        guard let url = components.string else { throw NotConfigured() }
        return (url, {
            drops.async {
                _ = try? admin.write { connection in try connection.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)", []) }
                admin.close()
            }
        })
    }

    /// Waits, up to `limit`, until the database at `url` takes no more connections: what a test
    /// that needs the database gone calls after `drop`, which drops it in the background.
    public static func waitUntilGone(_ url: String, limit: Duration = .seconds(60)) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            let answered = await onOwnThread { () -> Bool in
                guard let database = try? PostgresDatabase(url: url, maxConnections: 1, limits: adminLimits, logger: quiet) else { return false }
                defer { database.close() }
                return (try? database.write { connection in _ = try connection.execute("SELECT 1", []) }) != nil
            }
            if !answered { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// Creating or dropping a test's database fails after a minute rather than the five a server allows a statement.
    private static let adminLimits = PostgresTimeLimits(statement: .seconds(60))
    private static let testLimits = PostgresTimeLimits(statement: .seconds(60))
    private static let drops = DispatchQueue(label: "relata.test-postgres.drops", attributes: .concurrent)

    private static var quiet: Logger {
        var logger = Logger(label: "relata.test-postgres")
        logger.logLevel = .critical
        return logger
    }
}

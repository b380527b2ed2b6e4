import Foundation
import Logging
import RelataServer
import Testing

/// The databases the server suite runs on: every test that takes a backend runs once per backend.
enum StorageBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres

    var testDescription: String { rawValue }

    /// A fresh, empty database of this backend; `cleanup` removes it.
    ///
    /// PostgreSQL comes from `RELATA_POSTGRES_URL` (`Scripts/test.sh` starts a throwaway cluster
    /// and sets it): each call makes a database of its own there. Without it the test fails
    /// with a message saying so — it is never skipped.
    func makeDatabase(in folder: URL) throws -> (database: any SQLDatabase, cleanup: @Sendable () -> Void) {
        switch self {
        case .sqlite:
            return (try SQLiteDatabase(path: folder.appendingPathComponent("shop.sqlite").path), {})
        case .postgres:
            return try TestPostgres.makeDatabase()
        }
    }
}

/// Databases made for tests on the cluster `RELATA_POSTGRES_URL` names.
enum TestPostgres {
    struct NotConfigured: Error, CustomStringConvertible {
        var description: String {
            "RELATA_POSTGRES_URL is not set: the PostgreSQL tests need a server (Scripts/test.sh starts a throwaway cluster and sets it)"
        }
    }

    static var baseURL: String {
        get throws {
            guard let url = ProcessInfo.processInfo.environment["RELATA_POSTGRES_URL"], !url.isEmpty else { throw NotConfigured() }
            return url
        }
    }

    /// A database of its own (`relata_test_…`), dropped by `cleanup`.
    static func makeDatabase() throws -> (database: any SQLDatabase, cleanup: @Sendable () -> Void) {
        let base = try baseURL
        let name = "relata_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        var quiet = Logger(label: "relata.test-postgres")
        quiet.logLevel = .critical
        let admin = try PostgresDatabase(url: base, maxConnections: 1, logger: quiet)
        try admin.write { connection in _ = try connection.execute("CREATE DATABASE \(name)", []) }
        var components = try #require(URLComponents(string: base))
        components.path = "/" + name
        let database = try PostgresDatabase(url: try #require(components.string), maxConnections: 4, logger: quiet)
        return (database, {
            database.close()
            _ = try? admin.write { connection in try connection.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)", []) }
            admin.close()
        })
    }
}

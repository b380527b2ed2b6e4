import Foundation
import Relata

/// Brute-force protection: after `limit` failed logins for a user name in a domain within
/// `window`, further attempts for that name there are refused until the window has passed
/// since the first of them — right password or not. The failures are kept in the sessions'
/// database, so every server instance sharing it counts them together.
///
/// What strangers can make it store is bounded: a failure is a fixed-size digest of the
/// domain and name (never the name itself, whatever its length) and a time, and the table
/// keeps at most `maxRecords` of them (the oldest go first).
final class LoginThrottle: Sendable {
    private let database: any SQLDatabase
    let limit: Int
    let window: TimeInterval
    let maxRecords: Int

    init(database: any SQLDatabase, limit: Int = 5, window: TimeInterval = 300, maxRecords: Int = 100_000) {
        self.database = database
        self.limit = limit
        self.window = window
        self.maxRecords = max(limit, maxRecords)
    }

    /// Whose failures count together: a user name in a domain.
    struct Name: Sendable {
        /// SHA-256 of the domain (case-insensitive) and the name in Unicode's composed form.
        let digest: String

        init(domain: String, user: String) {
            digest = SHA256.hex(of: Array((domain.lowercased() + "\u{0}" + user.precomposedStringWithCanonicalMapping).utf8))
        }
    }

    /// Creates the table of failures when it is missing.
    static func createTable(in connection: any SQLConnection) throws {
        let dialect = connection.dialect
        try connection.execute("""
            CREATE TABLE IF NOT EXISTS relata_login_failures (
                user_name \(dialect.columnType(of: FieldDefinition("user", .string))) NOT NULL,
                failed_at \(dialect.columnType(of: FieldDefinition("at", .float))) NOT NULL
            )
            """, [])
        try connection.execute("CREATE INDEX IF NOT EXISTS relata_login_failures_by_user ON relata_login_failures (user_name, failed_at)", [])
        try connection.execute("CREATE INDEX IF NOT EXISTS relata_login_failures_by_time ON relata_login_failures (failed_at)", [])
    }

    /// How long until `name` may try again (nil: now).
    func waitTime(for name: Name, now: Date = Date()) throws -> TimeInterval? {
        let dialect = database.dialect
        let since = now.timeIntervalSince1970 - window
        let recent = try database.read { connection in
            try connection.rows("SELECT COUNT(*), MIN(failed_at) FROM relata_login_failures WHERE user_name = \(dialect.placeholder(1)) AND failed_at > \(dialect.placeholder(2))",
                                [.string(name.digest), .double(since)], reading: [FieldDefinition("count", .integer), FieldDefinition("first", .float)]).first
        }
        guard let recent, let count = recent[0].integerValue, count >= limit, let first = recent[1].doubleValue else { return nil }
        return max(window - (now.timeIntervalSince1970 - first), 0)
    }

    /// Records a failure; failures older than the window, and the oldest beyond `maxRecords`,
    /// are forgotten on the way.
    func recordFailure(for name: Name, now: Date = Date()) throws {
        let dialect = database.dialect
        try database.inTransaction { connection in
            try connection.execute("DELETE FROM relata_login_failures WHERE failed_at <= \(dialect.placeholder(1))", [.double(now.timeIntervalSince1970 - window)])
            let count = try connection.value("SELECT COUNT(*) FROM relata_login_failures", [], reading: FieldDefinition("count", .integer))?.integerValue ?? 0
            if count >= maxRecords {
                try connection.execute("""
                    DELETE FROM relata_login_failures WHERE failed_at <= (SELECT failed_at FROM relata_login_failures ORDER BY failed_at LIMIT 1 OFFSET \(dialect.placeholder(1)))
                    """, [.integer(count - Int64(maxRecords))])
            }
            try connection.execute("INSERT INTO relata_login_failures (user_name, failed_at) VALUES (\(dialect.placeholder(1)), \(dialect.placeholder(2)))",
                                   [.string(name.digest), .double(now.timeIntervalSince1970)])
        }
    }

    func recordSuccess(for name: Name) throws {
        let dialect = database.dialect
        try database.inTransaction { connection in
            try connection.execute("DELETE FROM relata_login_failures WHERE user_name = \(dialect.placeholder(1))", [.string(name.digest)])
        }
    }
}

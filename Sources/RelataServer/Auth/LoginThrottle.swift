import Foundation
import Relata

/// Brute-force protection: after `limit` failed logins for a user name within `window`,
/// further attempts for that name are refused until the window has passed since the first
/// of them — right password or not. The failures are kept in the sessions' database, so every
/// server instance sharing it counts them together.
final class LoginThrottle: Sendable {
    private let database: any SQLDatabase
    let limit: Int
    let window: TimeInterval

    init(database: any SQLDatabase, limit: Int = 5, window: TimeInterval = 300) {
        self.database = database
        self.limit = limit
        self.window = window
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
    }

    /// How long until `user` may try again (nil: now).
    func waitTime(for user: String, now: Date = Date()) throws -> TimeInterval? {
        let dialect = database.dialect
        let since = now.timeIntervalSince1970 - window
        let recent = try database.read { connection in
            try connection.rows("SELECT COUNT(*), MIN(failed_at) FROM relata_login_failures WHERE user_name = \(dialect.placeholder(1)) AND failed_at > \(dialect.placeholder(2))",
                                [.string(user), .double(since)], reading: [FieldDefinition("count", .integer), FieldDefinition("first", .float)]).first
        }
        guard let recent, let count = recent[0].integerValue, count >= limit, let first = recent[1].doubleValue else { return nil }
        return max(window - (now.timeIntervalSince1970 - first), 0)
    }

    /// Records a failure; failures older than the window are forgotten on the way.
    func recordFailure(for user: String, now: Date = Date()) throws {
        let dialect = database.dialect
        try database.inTransaction { connection in
            try connection.execute("DELETE FROM relata_login_failures WHERE failed_at <= \(dialect.placeholder(1))", [.double(now.timeIntervalSince1970 - window)])
            try connection.execute("INSERT INTO relata_login_failures (user_name, failed_at) VALUES (\(dialect.placeholder(1)), \(dialect.placeholder(2)))",
                                   [.string(user), .double(now.timeIntervalSince1970)])
        }
    }

    func recordSuccess(for user: String) throws {
        let dialect = database.dialect
        try database.inTransaction { connection in
            try connection.execute("DELETE FROM relata_login_failures WHERE user_name = \(dialect.placeholder(1))", [.string(user)])
        }
    }
}

import Foundation
import Relata

/// Logged-in sessions, kept in the database so that any server instance sharing it
/// serves any client, and a logout is seen by all. Only a digest of each token is
/// stored: a copy of the database does not let anyone in.
public final class SessionStore: Sendable {
    /// Also where login failures are counted (``LoginThrottle``).
    let database: any SQLDatabase
    /// How long a session lasts after its last use.
    public let lifetime: Duration

    /// Keeps sessions in a database (a table `relata_sessions`, created when missing): on
    /// PostgreSQL, every server instance using it shares them.
    public init(database: any SQLDatabase, lifetime: Duration = .seconds(8 * 3600)) throws {
        self.database = database
        self.lifetime = lifetime
        let dialect = database.dialect
        let text = dialect.columnType(of: FieldDefinition("token", .string))
        let seconds = dialect.columnType(of: FieldDefinition("expires", .float))
        try database.write { connection in
            _ = try connection.execute("""
                CREATE TABLE IF NOT EXISTS relata_sessions (
                    token_digest \(text) PRIMARY KEY NOT NULL,
                    session \(text) NOT NULL,
                    expires \(seconds) NOT NULL
                )
                """, [])
            try LoginThrottle.createTable(in: connection)
        }
    }

    /// Keeps sessions in a SQLite database file (created when missing).
    public convenience init(path: String, lifetime: Duration = .seconds(8 * 3600)) throws {
        try self.init(database: SQLiteDatabase(path: path, synchronous: false), lifetime: lifetime)
    }

    private var dialect: any SQLDialect { database.dialect }

    /// Starts a session; returns its token, which the client sends back as `Authorization: Bearer …`.
    public func start(_ session: Session, now: Date = Date()) throws -> String {
        var generator = SystemRandomNumberGenerator()
        let token = (0..<4).map { _ in String(format: "%016llx", generator.next() as UInt64) }.joined()
        let encoded = String(decoding: try JSONEncoder().encode(session), as: UTF8.self)
        try database.inTransaction { connection in
            try connection.execute("DELETE FROM relata_sessions WHERE expires < \(dialect.placeholder(1))", [.double(now.timeIntervalSince1970)])
            try connection.execute("INSERT INTO relata_sessions (token_digest, session, expires) VALUES (\(dialect.placeholder(1)), \(dialect.placeholder(2)), \(dialect.placeholder(3)))",
                                   [.string(Self.digest(token)), .string(encoded), .double(expiry(from: now))])
        }
        return token
    }

    /// The session of a token, or nil when it is unknown, ended or expired. Using a session
    /// extends it (written at most once a minute, or a tenth of the lifetime when that is
    /// shorter: most requests only read).
    public func session(for token: String, now: Date = Date()) throws -> Session? {
        guard token.count == 64, token.allSatisfy(\.isHexDigit) else { return nil }
        let digest = Self.digest(token)
        let found = try database.read { connection in
            try connection.rows("SELECT session, expires FROM relata_sessions WHERE token_digest = \(dialect.placeholder(1))", [.string(digest)],
                                reading: [FieldDefinition("session", .string), FieldDefinition("expires", .float)]).first
        }
        guard let found, let text = found[0].stringValue, let expires = found[1].doubleValue, expires >= now.timeIntervalSince1970 else { return nil }
        let extended = expiry(from: now)
        if extended - expires >= min(60, lifetimeSeconds / 10) {
            try database.inTransaction { connection in
                try connection.execute("UPDATE relata_sessions SET expires = \(dialect.placeholder(1)) WHERE token_digest = \(dialect.placeholder(2)) AND expires < \(dialect.placeholder(3))",
                                       [.double(extended), .string(digest), .double(extended)])
            }
        }
        return try JSONDecoder().decode(Session.self, from: Data(text.utf8))
    }

    /// Ends a session (logout); ending an unknown one does nothing.
    public func end(_ token: String) throws {
        try database.inTransaction { connection in
            try connection.execute("DELETE FROM relata_sessions WHERE token_digest = \(dialect.placeholder(1))", [.string(Self.digest(token))])
        }
    }

    /// Ends every session: everyone logs in again (after a security incident, say).
    public func endAll() throws {
        try database.inTransaction { connection in try connection.execute("DELETE FROM relata_sessions", []) }
    }

    private var lifetimeSeconds: Double {
        Double(lifetime.components.seconds) + Double(lifetime.components.attoseconds) / 1e18
    }

    private func expiry(from now: Date) -> Double {
        now.timeIntervalSince1970 + lifetimeSeconds
    }

    private static func digest(_ token: String) -> String {
        SHA256.hex(of: Array(token.utf8))
    }
}

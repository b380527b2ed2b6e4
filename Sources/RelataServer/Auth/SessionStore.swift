import Foundation
import GRDB
import Relata

/// Logged-in sessions, kept in the database so that any server instance sharing it
/// serves any client, and a logout is seen by all. Only a digest of each token is
/// stored: a copy of the database does not let anyone in.
public final class SessionStore: Sendable {
    private let queue: any DatabaseWriter
    /// How long a session lasts after its last use.
    public let lifetime: Duration

    /// Opens (or creates) the session table in a database file.
    public init(path: String, lifetime: Duration = .seconds(8 * 3600)) throws {
        self.lifetime = lifetime
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        // A session row lost to a power cut only means logging in again: commits need not wait for the disk.
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        queue = path == ":memory:" ? try DatabaseQueue(configuration: configuration) : try DatabasePool(path: path, configuration: configuration)
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS relata_sessions (
                    token_digest TEXT PRIMARY KEY NOT NULL,
                    session TEXT NOT NULL,
                    expires REAL NOT NULL
                )
                """)
        }
    }

    /// Starts a session; returns its token, which the client sends back as `Authorization: Bearer …`.
    public func start(_ session: Session, now: Date = Date()) throws -> String {
        var generator = SystemRandomNumberGenerator()
        let token = (0..<4).map { _ in String(format: "%016llx", generator.next() as UInt64) }.joined()
        let encoded = String(decoding: try JSONEncoder().encode(session), as: UTF8.self)
        try queue.write { db in
            try db.execute(sql: "DELETE FROM relata_sessions WHERE expires < ?", arguments: [now.timeIntervalSince1970])
            try db.execute(sql: "INSERT INTO relata_sessions (token_digest, session, expires) VALUES (?, ?, ?)",
                           arguments: [Self.digest(token), encoded, expiry(from: now)])
        }
        return token
    }

    /// The session of a token, or nil when it is unknown, ended or expired. Using a session
    /// extends it (written at most once a minute, or a tenth of the lifetime when that is
    /// shorter: most requests only read).
    public func session(for token: String, now: Date = Date()) throws -> Session? {
        guard token.count == 64, token.allSatisfy(\.isHexDigit) else { return nil }
        let digest = Self.digest(token)
        let found = try queue.read { db -> (text: String, expires: Double)? in
            guard let row = try Row.fetchOne(db, sql: "SELECT session, expires FROM relata_sessions WHERE token_digest = ?", arguments: [digest]),
                  let text = row["session"] as String?, let expires = row["expires"] as Double? else { return nil }
            return (text, expires)
        }
        guard let found, found.expires >= now.timeIntervalSince1970 else { return nil }
        let extended = expiry(from: now)
        if extended - found.expires >= min(60, lifetimeSeconds / 10) {
            try queue.write { db in
                try db.execute(sql: "UPDATE relata_sessions SET expires = ? WHERE token_digest = ? AND expires < ?", arguments: [extended, digest, extended])
            }
        }
        return try JSONDecoder().decode(Session.self, from: Data(found.text.utf8))
    }

    /// Ends a session (logout); ending an unknown one does nothing.
    public func end(_ token: String) throws {
        try queue.write { db in
            try db.execute(sql: "DELETE FROM relata_sessions WHERE token_digest = ?", arguments: [Self.digest(token)])
        }
    }

    /// Ends every session: everyone logs in again (after a security incident, say).
    public func endAll() throws {
        try queue.write { db in try db.execute(sql: "DELETE FROM relata_sessions") }
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

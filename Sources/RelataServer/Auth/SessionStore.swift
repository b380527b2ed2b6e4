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
    /// How long a session lasts at most, however much it is used.
    public let maxLifetime: Duration
    /// The sessions read lately (``SessionCache``).
    private let cache: SessionCache

    /// Keeps sessions in a database (a table `relata_sessions`, created when missing): on
    /// PostgreSQL, every server instance using it shares them. A table of an older Relata (without
    /// the columns that say whose a session is) is replaced: its sessions end, their users log in again.
    ///
    /// - Parameters:
    ///   - lifetime: how long a session lasts after its last use (8 hours by default).
    ///   - maxLifetime: how long it lasts at most after its login (24 hours by default).
    ///   - cacheFor: how long a session read lately is served from memory before the store looks
    ///     whether any instance ended sessions since (one read, however many requests); a session
    ///     ended on another instance is refused here within that time. Zero reads every time.
    public init(database: any SQLDatabase, lifetime: Duration = .seconds(8 * 3600), maxLifetime: Duration = .seconds(24 * 3600),
                cacheFor: Duration = .seconds(1)) throws {
        self.database = database
        self.lifetime = lifetime
        self.maxLifetime = max(maxLifetime, .seconds(1))
        cache = SessionCache(staleness: cacheFor)
        let dialect = database.dialect
        let text = dialect.columnType(of: FieldDefinition("token", .string))
        let seconds = dialect.columnType(of: FieldDefinition("expires", .float))
        let current = (try? database.read { connection in
            try connection.rows("SELECT account_roles FROM relata_sessions WHERE 1 = 0", [], reading: [FieldDefinition("account_roles", .string)])
        }) != nil
        try database.write { connection in
            if !current { _ = try connection.execute("DROP TABLE IF EXISTS relata_sessions", []) }
            _ = try connection.execute("""
                CREATE TABLE IF NOT EXISTS relata_sessions (
                    token_digest \(text) PRIMARY KEY NOT NULL,
                    session \(text) NOT NULL,
                    user_name \(text) NOT NULL,
                    domain \(text) NOT NULL,
                    account_roles \(text) NOT NULL,
                    started \(seconds) NOT NULL,
                    expires \(seconds) NOT NULL,
                    ends \(seconds) NOT NULL
                )
                """, [])
            try LoginThrottle.createTable(in: connection)
            let counter = dialect.columnType(of: FieldDefinition("generation", .largeInt))
            _ = try connection.execute("CREATE TABLE IF NOT EXISTS relata_session_changes (id INTEGER PRIMARY KEY NOT NULL, generation \(counter) NOT NULL)", [])
            _ = try connection.execute("INSERT INTO relata_session_changes (id, generation) VALUES (1, 0) ON CONFLICT DO NOTHING", [])
        }
    }

    /// Keeps sessions in a SQLite database file (created when missing).
    public convenience init(path: String, lifetime: Duration = .seconds(8 * 3600), maxLifetime: Duration = .seconds(24 * 3600),
                            cacheFor: Duration = .seconds(1)) throws {
        try self.init(database: SQLiteDatabase(path: path, synchronous: false), lifetime: lifetime, maxLifetime: maxLifetime, cacheFor: cacheFor)
    }

    private var dialect: any SQLDialect { database.dialect }

    /// Starts a session; returns its token, which the client sends back as `Authorization: Bearer …`.
    ///
    /// - Parameter accountRoles: the roles the user's account gave (before `afterLogin` added any):
    ///   when they change, or the account goes, ``endSessionsOfChangedAccounts(account:now:)`` ends
    ///   the session. The session's roles when left out.
    public func start(_ session: Session, accountRoles: [String]? = nil, now: Date = Date()) throws -> String {
        var generator = SystemRandomNumberGenerator()
        let token = (0..<4).map { _ in String(format: "%016llx", generator.next() as UInt64) }.joined()
        let encoded = String(decoding: try JSONEncoder().encode(session), as: UTF8.self)
        let ends = now.timeIntervalSince1970 + maxLifetime.seconds
        let placeholders = (1...8).map(dialect.placeholder).joined(separator: ", ")
        try database.inTransaction { connection in
            try connection.execute("DELETE FROM relata_sessions WHERE expires < \(dialect.placeholder(1))", [.double(now.timeIntervalSince1970)])
            try connection.execute("INSERT INTO relata_sessions (token_digest, session, user_name, domain, account_roles, started, expires, ends) VALUES (\(placeholders))",
                                   [.string(Self.digest(token)), .string(encoded), .string(session.values["User"]?.stringValue ?? ""),
                                    .string(session.values["Domain"]?.stringValue ?? ""), .string(Self.rolesText(accountRoles ?? session.roles)),
                                    .double(now.timeIntervalSince1970),
                                    .double(min(expiry(from: now), ends)), .double(ends)])
        }
        return token
    }

    /// The session of a token, or nil when it is unknown, ended or expired — after ``lifetime``
    /// unused, or ``maxLifetime`` after its login. Using a session extends it up to that limit
    /// (written at most once a minute, or a tenth of the lifetime when that is shorter: most
    /// requests only read). A session read lately comes from memory (``SessionCache``).
    public func session(for token: String, now: Date = Date()) throws -> Session? {
        guard token.count == 64, token.allSatisfy(\.isHexDigit) else { return nil }
        let digest = Self.digest(token)
        if cache.isDue {
            let generation = try database.read { connection in
                try connection.value("SELECT generation FROM relata_session_changes WHERE id = 1", [], reading: FieldDefinition("generation", .largeInt))
            }
            cache.saw(generation: generation?.integerValue ?? 0)
        }
        var entry: SessionCache.Entry
        if let cached = cache.entry(digest), cached.expires >= now.timeIntervalSince1970 {
            entry = cached
        } else {
            let found = try database.read { connection in
                try connection.rows("SELECT session, expires, ends FROM relata_sessions WHERE token_digest = \(dialect.placeholder(1))", [.string(digest)],
                                    reading: [FieldDefinition("session", .string), FieldDefinition("expires", .float), FieldDefinition("ends", .float)]).first
            }
            guard let found, let text = found[0].stringValue, let expires = found[1].doubleValue, let ends = found[2].doubleValue,
                  expires >= now.timeIntervalSince1970 else {
                cache.forget(digest)
                return nil
            }
            entry = SessionCache.Entry(session: try JSONDecoder().decode(Session.self, from: Data(text.utf8)), expires: expires, ends: ends)
        }
        let extended = min(expiry(from: now), entry.ends)
        if extended - entry.expires >= min(60, lifetime.seconds / 10) {
            try database.inTransaction { connection in
                try connection.execute("UPDATE relata_sessions SET expires = \(dialect.placeholder(1)) WHERE token_digest = \(dialect.placeholder(2)) AND expires < \(dialect.placeholder(3))",
                                       [.double(extended), .string(digest), .double(extended)])
            }
            entry.expires = extended
        }
        cache.store(entry, for: digest)
        return entry.session
    }

    /// The session of a token when it can be answered from memory alone — held, not expired, not
    /// due to be extended, and the change counter not due to be read — else nil (ask
    /// ``session(for:now:)``, which may read and write the database). Never blocks: a server
    /// answers most requests' sessions with it on the thread they arrive on.
    ///
    /// ```swift
    /// let session = try sessions.cachedSession(for: token) ?? sessions.session(for: token)
    /// ```
    public func cachedSession(for token: String, now: Date = Date()) -> Session? {
        guard cache.isOn, !cache.isDue, token.utf8.count == 64 else { return nil }
        guard let entry = cache.entry(Self.digest(token)), entry.expires >= now.timeIntervalSince1970 else { return nil }
        let extended = min(expiry(from: now), entry.ends)
        guard extended - entry.expires < min(60, lifetime.seconds / 10) else { return nil }
        return entry.session
    }

    /// Ends a session (logout); ending an unknown one does nothing.
    public func end(_ token: String) throws {
        let digest = Self.digest(token)
        cache.forget(digest)
        try endingSessions { connection in
            try connection.execute("DELETE FROM relata_sessions WHERE token_digest = \(dialect.placeholder(1))", [.string(digest)])
        }
    }

    /// Ends every session: everyone logs in again (after a security incident, say).
    /// - Returns: how many were ended.
    @discardableResult
    public func endAll() throws -> Int {
        try endingSessions { connection in try connection.execute("DELETE FROM relata_sessions", []) }
    }

    /// Runs a transaction that ends sessions, telling every instance to forget the sessions it
    /// holds (the change counter moves in the same transaction); this one forgets them at once.
    @discardableResult
    private func endingSessions(_ work: (any SQLConnection) throws -> Int) throws -> Int {
        defer { cache.forgetAll() }
        return try database.inTransaction { connection in
            let ended = try work(connection)
            if ended > 0 { try connection.execute("UPDATE relata_session_changes SET generation = generation + 1 WHERE id = 1", []) }
            return ended
        }
    }

    /// Ends the sessions of a user (in one domain, or in all): after his account was removed,
    /// his roles changed, or his password leaked.
    /// - Returns: how many were ended.
    @discardableResult
    public func end(user: String, domain: String? = nil) throws -> Int {
        let name = user.precomposedStringWithCanonicalMapping
        return try endingSessions { connection in
            if let domain {
                return try connection.execute("DELETE FROM relata_sessions WHERE user_name = \(dialect.placeholder(1)) AND domain = \(dialect.placeholder(2))",
                                              [.string(name), .string(domain)])
            }
            return try connection.execute("DELETE FROM relata_sessions WHERE user_name = \(dialect.placeholder(1))", [.string(name)])
        }
    }

    /// Ends the sessions whose account is gone or has other roles than at the login: `account`
    /// gives a user's roles in a domain now (nil for no such user). Each user is looked up once.
    /// - Returns: how many were ended.
    @discardableResult
    public func endSessionsOfChangedAccounts(account: (_ user: String, _ domain: String) throws -> [String]?, now: Date = Date()) throws -> Int {
        let fields = [FieldDefinition("token_digest", .string), FieldDefinition("user_name", .string), FieldDefinition("domain", .string),
                      FieldDefinition("account_roles", .string)]
        let rows = try database.read { connection in
            try connection.rows("SELECT token_digest, user_name, domain, account_roles FROM relata_sessions WHERE expires >= \(dialect.placeholder(1))",
                                [.double(now.timeIntervalSince1970)], reading: fields)
        }
        var current: [String: String?] = [:]
        var ended: [String] = []
        for row in rows {
            let user = row[1].stringValue ?? "", domain = row[2].stringValue ?? ""
            let key = domain + "\u{0}" + user
            if current[key] == nil { current[key] = .some(try account(user, domain).map(Self.rolesText)) }
            if current[key]! != row[3].stringValue, let digest = row[0].stringValue { ended.append(digest) }
        }
        guard !ended.isEmpty else { return 0 }
        return try endingSessions { connection in
            try ended.reduce(0) { count, digest in
                count + (try connection.execute("DELETE FROM relata_sessions WHERE token_digest = \(dialect.placeholder(1))", [.string(digest)]))
            }
        }
    }

    /// Roles as one text, whatever their order.
    private static func rolesText(_ roles: [String]) -> String {
        Set(roles).sorted().joined(separator: ",")
    }

    /// A session as an operator sees it: whose, where, since when and until when (never its token).
    public struct Listing: Sendable, Hashable, Codable {
        public var user: String
        public var domain: String
        public var roles: [String]
        public var started: Date
        /// When it ends unless it is used again.
        public var expires: Date
        /// When it ends however much it is used.
        public var ends: Date
    }

    /// The sessions that have not expired, oldest first.
    public func list(now: Date = Date()) throws -> [Listing] {
        let fields = ["session", "user_name", "domain", "started", "expires", "ends"].map { FieldDefinition($0, $0 == "session" || $0 == "user_name" || $0 == "domain" ? .string : .float) }
        let rows = try database.read { connection in
            try connection.rows("SELECT session, user_name, domain, started, expires, ends FROM relata_sessions WHERE expires >= \(dialect.placeholder(1)) ORDER BY started",
                                [.double(now.timeIntervalSince1970)], reading: fields)
        }
        return rows.map { row in
            let session = row[0].stringValue.flatMap { try? JSONDecoder().decode(Session.self, from: Data($0.utf8)) }
            func date(_ value: Value) -> Date { Date(timeIntervalSince1970: value.doubleValue ?? 0) }
            return Listing(user: row[1].stringValue ?? "", domain: row[2].stringValue ?? "", roles: session?.roles ?? [],
                           started: date(row[3]), expires: date(row[4]), ends: date(row[5]))
        }
    }

    private func expiry(from now: Date) -> Double {
        now.timeIntervalSince1970 + lifetime.seconds
    }

    private static func digest(_ token: String) -> String {
        SHA256.hex(of: Array(token.utf8))
    }
}

import Foundation
import HummingbirdBcrypt
import Relata

/// A user the server knows: a name, a bcrypt hash of the password (never the password),
/// roles, and session values rules see (`session.UserId`, …).
public struct ServerUser: Sendable, Hashable, Codable {
    public var name: String
    /// A bcrypt hash (`relata hash-password` prints one).
    public var passwordHash: String
    public var roles: [String]
    public var values: [String: Value]

    public init(name: String, passwordHash: String, roles: [String] = [], values: [String: Value] = [:]) {
        self.name = name
        self.passwordHash = passwordHash
        self.roles = roles
        self.values = values
    }

    private enum CodingKeys: String, CodingKey { case name, passwordHash, roles, values }

    /// Users files are written by people: `values` are plain JSON (`{"UserId": 7}`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        passwordHash = try container.decode(String.self, forKey: .passwordHash)
        roles = try container.decodeIfPresent([String].self, forKey: .roles) ?? []
        let plain = try container.decodeIfPresent([String: JSONValue].self, forKey: .values) ?? [:]
        do {
            values = try plain.mapValues(Value.init(untypedJSON:))
        } catch {
            throw DecodingError.dataCorruptedError(forKey: .values, in: container, debugDescription: "a session value is a number, text, true/false or null")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(passwordHash, forKey: .passwordHash)
        try container.encode(roles, forKey: .roles)
        try container.encode(values.mapValues(JSONValue.init), forKey: .values)
    }

    /// A bcrypt hash of a password, for configuration files.
    public static func hash(password: String, cost: UInt8 = 12) -> String {
        Bcrypt.hash(password, cost: cost)
    }
}

/// The parts of a login string: `User=ann;Password=secret;Domain=Shop;Schema=PCTrade`
/// (`User Id` is accepted for `User`; keys are case-insensitive; a value may not contain `;`).
public struct LoginString: Sendable, Hashable {
    public var user: String
    public var password: String
    public var domain: String?
    public var schema: String?

    /// Parses a login string.
    ///
    /// - Throws: ``RelataError/Code/invalidArgument`` naming the part that is missing, unknown or given twice.
    public init(_ text: String) throws {
        var parts: [String: String] = [:]
        for piece in text.split(separator: ";", omittingEmptySubsequences: true) {
            guard let equals = piece.firstIndex(of: "=") else {
                throw RelataError(.invalidArgument, "the login string part '\(piece.prefix(40))' has no '='")
            }
            var key = piece[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            if key == "user id" || key == "userid" { key = "user" }
            guard ["user", "password", "domain", "schema"].contains(key) else {
                throw RelataError(.invalidArgument, "the login string has an unknown part '\(key)' (known: User, Password, Domain, Schema)")
            }
            guard parts[key] == nil else { throw RelataError(.invalidArgument, "the login string gives '\(key)' twice") }
            parts[key] = String(piece[piece.index(after: equals)...])
        }
        guard let user = parts["user"], !user.isEmpty else { throw RelataError(.invalidArgument, "the login string names no User") }
        // One form of the name (Unicode's composed form) for the providers' lookups and the lockout alike.
        self.user = user.precomposedStringWithCanonicalMapping
        password = parts["password"] ?? ""
        domain = parts["domain"]
        schema = parts["schema"]
    }
}

/// A user a provider knows: the stored bcrypt hash of the password, and the session a
/// login with the right password starts.
public struct LoginAccount: Sendable {
    public var passwordHash: String
    public var session: Session

    public init(passwordHash: String, session: Session) {
        self.passwordHash = passwordHash
        self.session = session
    }
}

/// Where a server finds its users. A provider only finds them; the ``LoginService`` checks
/// passwords (bounded by its ``PasswordChecks``, with the same timing for unknown names).
public protocol LoginProvider: Sendable {
    /// The account of `user` when this provider knows the name; nil otherwise.
    func account(named user: String) throws -> LoginAccount?
}

/// Users listed in the configuration (or a users file). ``replace(with:)`` swaps them while the
/// server runs (`relata serve` does when the users file changes); the sessions of users removed
/// or given other roles then end at the next ``ServerServices/endSessionsOfChangedAccounts()``.
///
/// ```swift
/// let users = StaticUsers([ServerUser(name: "ann", passwordHash: hash, roles: ["Sales"])])
/// users.replace(with: [])   // ann can no longer log in
/// ```
public final class StaticUsers: LoginProvider, @unchecked Sendable {
    // @unchecked Sendable: `stored` is read and written only while `lock` is held.
    private let lock = NSLock()
    private var stored: [ServerUser]

    public init(_ users: [ServerUser]) {
        stored = users
    }

    /// The users as they are now.
    public var users: [ServerUser] { lock.withLock { stored } }

    /// Replaces every user at once: a login sees the old list or the new one, never a mix.
    public func replace(with users: [ServerUser]) {
        lock.withLock { stored = users }
    }

    public func account(named name: String) throws -> LoginAccount? {
        guard let user = users.first(where: { $0.name == name }) else { return nil }
        var values = user.values
        values["User"] = .string(user.name)
        return LoginAccount(passwordHash: user.passwordHash, session: Session(values: values, roles: user.roles))
    }
}

/// Checks logins with the configured providers, in order — the first that knows the user
/// decides — and keeps the sessions.
public final class LoginService: Sendable {
    public let providers: [any LoginProvider]
    public let sessions: SessionStore
    /// Where this service's password checks run (the server sets its limits).
    public let passwordChecks: PasswordChecks
    private let throttle: LoginThrottle
    /// A hash of the users' usual cost, made at the start: the first login for an unknown name
    /// checks against it, so its answer takes as long as a real one's from the start (later ones
    /// wait as long as real checks took, without hashing).
    private let decoyHash: String

    /// The most common bcrypt cost among the static users' hashes (`$2b$10$…`); 12, the cost
    /// `relata hash-password` uses, when there are none.
    static func usualCost(of providers: [any LoginProvider]) -> UInt8 {
        var counts: [UInt8: Int] = [:]
        for case let users as StaticUsers in providers {
            for user in users.users {
                let parts = user.passwordHash.split(separator: "$")
                if parts.count >= 3, let cost = UInt8(parts[1]), (4...31).contains(cost) { counts[cost, default: 0] += 1 }
            }
        }
        return counts.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key ?? 12
    }

    /// - Parameters:
    ///   - failedLoginLimit: failed logins for one user name in a domain, within `lockout`, after
    ///     which that name is locked out there until `lockout` has passed.
    ///   - maxFailureRecords: the most failed logins remembered (the oldest are forgotten first), so
    ///     strangers cannot grow the sessions' database.
    public init(providers: [any LoginProvider], sessions: SessionStore, failedLoginLimit: Int = 5, lockout: Duration = .seconds(300),
                maxFailureRecords: Int = 100_000, passwordChecks: PasswordChecks = PasswordChecks()) {
        self.providers = providers
        self.sessions = sessions
        self.passwordChecks = passwordChecks
        decoyHash = ServerUser.hash(password: UUID().uuidString, cost: Self.usualCost(of: providers))
        throttle = LoginThrottle(database: sessions.database, limit: max(failedLoginLimit, 1), window: Double(lockout.components.seconds),
                                 maxRecords: maxFailureRecords)
    }

    /// Users listed in the configuration.
    public convenience init(users: [ServerUser], sessions: SessionStore) {
        self.init(providers: [StaticUsers(users)], sessions: sessions)
    }

    /// A login refused because its user name failed too often lately.
    public struct LockedOut: Error, Sendable {
        /// Seconds until the name may try again.
        public let retryAfter: Int
    }

    /// Checks a login to `domain`; returns the user's session, or nil for a wrong user or
    /// password (which of the two is not told, not even by the time it takes). No session is started: see ``SessionStore/start(_:now:)``.
    ///
    /// Failures count per domain and user name (names that differ only in their Unicode
    /// encoding count as one).
    ///
    /// - Throws: ``LockedOut`` when the user name failed too often lately in this domain.
    public func authenticate(_ login: LoginString, in domain: String = "default") throws -> Session? {
        let found = try lookUp(login, in: domain)
        switch found {
        case .unknownUser(let wait):
            if passwordChecks.completed == 0 {
                _ = try passwordChecks.verifyWaiting(login.password, hash: decoyHash)
            } else {
                Thread.sleep(forTimeInterval: wait)
            }
            return nil
        case .account(let account, let name):
            let matches = try passwordChecks.verifyWaiting(login.password, hash: account.passwordHash)
            if case .accepted(let session) = try conclude(matches, account: account, name: name) { return session }
            return nil
        }
    }

    /// What checking a login found.
    enum Check: Sendable {
        case accepted(Session)
        case refused
        /// No provider knows the name: answer after `wait` seconds, as long as a real check takes.
        case unknownUser(wait: TimeInterval)
    }

    /// Checks a login holding no thread while it waits — for a password worker, or for an unknown
    /// name's answer (the caller waits that out): ``authenticate(_:in:)`` for a server. The
    /// throttle's and providers' blocking reads run off the cooperative pool.
    func check(_ login: LoginString, in domain: String) async throws -> Check {
        let found = try await OffCooperativePool.run { try self.lookUp(login, in: domain) }
        switch found {
        case .unknownUser(let wait):
            guard passwordChecks.completed == 0 else { return .unknownUser(wait: wait) }
            // No real check timed yet: check against the decoy, which times one.
            _ = try await passwordChecks.verify(login.password, hash: decoyHash)
            return .refused
        case .account(let account, let name):
            let matches = try await passwordChecks.verify(login.password, hash: account.passwordHash)
            return try await OffCooperativePool.run { try self.conclude(matches, account: account, name: name) }
        }
    }

    /// The first half of a check: the lockout, then the account a provider knows.
    private enum Found: Sendable {
        case account(LoginAccount, LoginThrottle.Name)
        case unknownUser(wait: TimeInterval)
    }

    private func lookUp(_ login: LoginString, in domain: String) throws -> Found {
        let throttled = LoginThrottle.Name(domain: domain, user: login.user)
        if let wait = try throttle.waitTime(for: throttled) { throw LockedOut(retryAfter: Int(wait.rounded(.up))) }
        for provider in providers {
            if let account = try provider.account(named: login.user) { return .account(account, throttled) }
        }
        try throttle.recordFailure(for: throttled)
        return .unknownUser(wait: passwordChecks.typicalCheckSeconds)
    }

    /// The second half: the password's verdict counted for the lockout.
    private func conclude(_ matches: Bool, account: LoginAccount, name: LoginThrottle.Name) throws -> Check {
        guard matches else {
            try throttle.recordFailure(for: name)
            return .refused
        }
        try throttle.recordSuccess(for: name)
        return .accepted(account.session)
    }
}

import Foundation
import Relata

/// Where and how the server listens, and the limits that keep one client from holding up the
/// others (`Documentation/Server.md` lists each with its `relata serve` option).
public struct ServerConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// The largest body of an UpdateData once the request's session is known (a larger one is answered 413).
    public var maxBodyBytes: Int
    /// The largest body of a read or a command (GetData, SQLGetData, ExecuteCommand): requests and
    /// parameters, never rows.
    public var maxQueryBodyBytes: Int
    /// The largest body of a login, a logout and a GetSchema (a stranger cannot make the server
    /// read megabytes; a body without a valid session is never read).
    public var maxBodyBytesBeforeSession: Int
    /// The most bytes of request bodies the server holds at once, across all requests (a body
    /// that would go past it is answered 503 with `Retry-After`).
    public var maxBodyBytesInFlight: Int
    /// How long a connection may stay idle, and how long a request's head may take to arrive.
    public var idleTimeout: Duration
    /// How long a request's whole body may take to arrive (answered 408 after).
    public var bodyTimeout: Duration
    /// How long one write of an answer may wait for the client to read before the connection is closed.
    public var writeTimeout: Duration
    /// Password checks that run at once in a domain, and logins that may wait for one (more
    /// are answered 503); see ``PasswordChecks``.
    public var loginWorkers: Int
    public var loginQueue: Int
    /// How long requests in flight may take to finish when the server is asked to stop.
    public var shutdownGrace: Duration
    /// Which other origins' pages may call the server from a browser (none by default; the
    /// server's own console needs none).
    public var cors: CORSPolicy
    /// The roles whose sessions may call `AdminService` (the console's *Server* page: health,
    /// sessions and recent refusals of their domain); none by default.
    public var adminRoles: [String]

    public init(host: String = "127.0.0.1", port: Int = 7099, maxBodyBytes: Int = 32 << 20, maxBodyBytesBeforeSession: Int = 64 << 10, maxQueryBodyBytes: Int = 1 << 20,
                maxBodyBytesInFlight: Int = 256 << 20, idleTimeout: Duration = .seconds(30), bodyTimeout: Duration = .seconds(60), writeTimeout: Duration = .seconds(15),
                loginWorkers: Int = max(1, ProcessInfo.processInfo.activeProcessorCount / 2), loginQueue: Int = 16,
                shutdownGrace: Duration = .seconds(10), cors: CORSPolicy = .none, adminRoles: [String] = []) {
        self.host = host
        self.port = port
        self.maxBodyBytes = maxBodyBytes
        self.maxBodyBytesBeforeSession = maxBodyBytesBeforeSession
        self.maxQueryBodyBytes = maxQueryBodyBytes
        self.maxBodyBytesInFlight = maxBodyBytesInFlight
        self.idleTimeout = idleTimeout
        self.bodyTimeout = bodyTimeout
        self.writeTimeout = writeTimeout
        self.loginWorkers = loginWorkers
        self.loginQueue = loginQueue
        self.shutdownGrace = shutdownGrace
        self.cors = cors
        self.adminRoles = adminRoles
    }

    /// Whether a session has one of the ``adminRoles``.
    ///
    /// ```swift
    /// ServerConfiguration(adminRoles: ["Manager"]).isAdmin(Session(roles: ["Sales", "Manager"]))   // true
    /// ```
    public func isAdmin(_ session: Session) -> Bool {
        session.roles.contains { adminRoles.contains($0) }
    }
}

import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import Relata

/// A PostgreSQL database through postgres-nio: a pool of connections, each lent to one unit
/// of work at a time. Units run synchronously on their own threads (rules call `lda`
/// synchronously), so a statement waits for its answer there — never on an event loop.
///
/// ```swift
/// let database = try PostgresDatabase(url: "postgres://relata:secret@127.0.0.1:5432/shop")
/// let storage = try SQLStorage(database: database, schema: schema)
/// ```
public final class PostgresDatabase: SQLDatabase {
    public var dialect: any SQLDialect { PostgresDialect() }
    private let pool: PostgresConnectionPool

    /// Connects to the database a URL names: `postgres://user:password@host:port/database`.
    ///
    /// - Parameters:
    ///   - maxConnections: the most connections open at once; a unit of work waits for one beyond that.
    ///   - limits: how long a connection, a statement's answer and closing may take (nothing waits for ever).
    /// - Throws: ``RelataError/Code/invalidArgument`` for a URL that is not such a URL (the password is never repeated);
    ///   ``SQLError`` when the first connection fails.
    public init(url: String, maxConnections: Int = 4 * System.coreCount, limits: PostgresTimeLimits = PostgresTimeLimits(),
                logger: Logger = Logger(label: "relata.postgres")) throws {
        pool = PostgresConnectionPool(configuration: try Self.configuration(from: url), maxConnections: max(1, maxConnections),
                                      limits: limits, logger: logger)
        try pool.withConnection { _ in }   // fails now, with the database's words, rather than at the first request
    }

    public var connectionsInUse: Int { pool.lent }

    /// Closes every connection (within ``PostgresTimeLimits/close``); nothing is lent afterwards.
    /// A server closes its databases when it stops.
    public func close() {
        pool.closeAll()
    }

    public func read<Result>(_ work: (any SQLConnection) throws -> Result) throws -> Result {
        try pool.withConnection { session in
            try session.begin(readOnly: true)
            return try session.committing(work)
        }
    }

    public func asyncRead<Result: Sendable>(_ work: @escaping @Sendable (any SQLConnection) throws -> Result) async throws -> Result {
        // Its statements wait for their answers, and its rows for the client: off the cooperative pool.
        try await OffCooperativePool.run { try self.read(work) }
    }

    public func write<Result>(_ work: (any SQLConnection) throws -> Result) throws -> Result {
        try pool.withConnection { session in
            do {
                return try work(session)
            } catch {
                if session.inTransaction { try? session.rollback() }
                throw error
            }
        }
    }

    /// The connection settings of a `postgres://` URL, for postgres-nio.
    ///
    /// `sslmode` in the URL's query chooses TLS as libpq does: `disable`; `prefer` (the default:
    /// TLS when the server offers it); `require` (TLS or no connection); `verify-ca` and
    /// `verify-full` (the server's certificate checked against `sslrootcert`, a PEM file, or the
    /// system's roots — and with `verify-full` its name against the host). `require` with an
    /// `sslrootcert` checks the certificate as `verify-ca` does.
    ///
    /// ```swift
    /// let settings = try PostgresDatabase.configuration(from: "postgres://relata:secret@db.example:5432/shop?sslmode=verify-full&sslrootcert=/etc/relata/db-ca.pem")
    /// let connection = try await PostgresConnection.connect(configuration: settings, id: 1, logger: logger)
    /// ```
    /// - Throws: ``RelataError/Code/invalidArgument`` for a URL that is not such a URL (the password
    ///   is never repeated), an unknown `sslmode` or query item, or a root certificate file that cannot be read.
    public static func configuration(from url: String) throws -> PostgresConnection.Configuration {
        let refused = RelataError(.invalidArgument, "expected a URL such as postgres://user:password@127.0.0.1:5432/database[?sslmode=verify-full&sslrootcert=ca.pem]")
        guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme ?? ""),
              let host = components.host, !host.isEmpty, let user = components.user, !user.isEmpty else { throw refused }
        let port = components.port ?? 5432
        guard (1...65535).contains(port) else { throw refused }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        var query: [String: String] = [:]
        for item in components.queryItems ?? [] {
            guard ["sslmode", "sslrootcert"].contains(item.name) else {
                throw RelataError(.invalidArgument, "the PostgreSQL URL has an unknown setting '\(item.name)' (settings: sslmode, sslrootcert)")
            }
            query[item.name] = item.value ?? ""
        }
        return PostgresConnection.Configuration(host: host, port: port, username: user.removingPercentEncoding ?? user,
                                                password: components.password?.removingPercentEncoding ?? components.password,
                                                database: database.isEmpty ? nil : database,
                                                tls: try tls(mode: query["sslmode"] ?? "prefer", rootCertificate: query["sslrootcert"]))
    }

    /// postgres-nio's TLS setting for a libpq `sslmode`.
    private static func tls(mode: String, rootCertificate: String?) throws -> PostgresConnection.Configuration.TLS {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let rootCertificate {
            do {
                configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(rootCertificate))
            } catch {
                throw RelataError(.invalidArgument, "the PostgreSQL URL's sslrootcert \(rootCertificate) cannot be read as PEM certificates: \(error)")
            }
        }
        switch mode {
        case "disable": return .disable
        case "prefer", "require":
            configuration.certificateVerification = rootCertificate == nil ? .none : .noHostnameVerification
            let context = try NIOSSLContext(configuration: configuration)
            return mode == "prefer" ? .prefer(context) : .require(context)
        case "verify-ca", "verify-full":
            configuration.certificateVerification = mode == "verify-ca" ? .noHostnameVerification : .fullVerification
            return .require(try NIOSSLContext(configuration: configuration))
        default:
            throw RelataError(.invalidArgument, "the PostgreSQL URL's sslmode is '\(mode)', not one of disable, prefer, require, verify-ca, verify-full")
        }
    }
}

/// One PostgreSQL connection lent to a unit of work: each statement is sent and its answer
/// awaited — for at most the statement's time limit and a grace; an answer that does not come
/// by then closes the connection (``isBroken``) and fails the statement.
final class PostgresSQLConnection: SQLConnection {
    let connection: PostgresConnection
    private let logger: Logger
    private let limits: PostgresTimeLimits
    var dialect: any SQLDialect { PostgresDialect() }
    private(set) var inTransaction = false
    /// The connection stopped answering and was closed: it is never lent again.
    var isBroken: Bool { brokenBecause != nil }
    /// Why the connection was given up, for the error of any statement after.
    private var brokenBecause: String?
    /// The connection closed under this unit of work before anything it sent could change the
    /// database (nothing went out but a transaction's start, a setting, or statements of a
    /// read-only transaction): the work may start again on another connection, as if this one had
    /// never been lent.
    var closedBeforeAnyChange: Bool { lostConnection && !sentAChange }
    private var lostConnection = false
    private var sentAChange = false
    /// The open transaction is read-only: PostgreSQL refuses any change in it.
    private var readOnlyTransaction = false
    /// How long the statement being run may take (``limiting(_:_:)`` shortens it).
    private var statementLimit: Duration
    /// Cancels the statement being run: its connection is closed (PostgreSQL then stops it).
    private var cancellation: WorkLimit?

    init(_ connection: PostgresConnection, limits: PostgresTimeLimits, logger: Logger) {
        self.connection = connection
        self.limits = limits
        self.logger = logger
        statementLimit = limits.statement
    }

    @discardableResult
    func execute(_ sql: String, _ arguments: [Value]) throws -> Int {
        try run(sql, arguments).metadata.rows ?? 0
    }

    /// Rows fetched at a time from a cursor: a query's answer is never held whole.
    static let fetchSize = 1024
    private var cursors = 0

    /// Inside a transaction a SELECT reads through a cursor, `fetchSize` rows at a time, so a table
    /// of any size streams through bounded memory — and `row` may run other statements between
    /// (the connection is free while a fetched batch is handed out).
    func query(_ sql: String, _ arguments: [Value], reading fields: [FieldDefinition], row: ([Value]) throws -> Bool) throws {
        // A cursor holds a SELECT only (an INSERT … RETURNING answers one row anyway).
        guard inTransaction, sql.hasPrefix("SELECT ") else {
            _ = try hand(try run(sql, arguments).rows, reading: fields, to: row)
            return
        }
        cursors += 1
        let cursor = "relata_cursor_\(cursors)"
        try run("DECLARE \(cursor) NO SCROLL CURSOR FOR \(sql)", arguments)
        defer { _ = try? run("CLOSE \(cursor)", []) }
        while true {
            let batch = try run("FETCH FORWARD \(Self.fetchSize) FROM \(cursor)", []).rows
            guard try hand(batch, reading: fields, to: row), batch.count == Self.fetchSize else { return }
        }
    }

    /// Hands rows to `row` as field values; false once it asked to stop.
    private func hand(_ rows: [PostgresRow], reading fields: [FieldDefinition], to row: ([Value]) throws -> Bool) throws -> Bool {
        for stored in rows {
            let cells = stored.makeRandomAccess()
            guard cells.count >= fields.count else { throw SQLError(.other, "the query returned \(cells.count) columns, not \(fields.count)") }
            let values = try fields.indices.map { try PostgresValues.value(cells[$0], for: fields[$0]) }
            guard try row(values) else { return false }
        }
        return true
    }

    func limiting<Result>(_ limit: WorkLimit, _ work: () throws -> Result) throws -> Result {
        // Reads run in a transaction of their own, which the setting lasts for.
        let remaining = limit.remaining ?? statementLimit
        _ = try run("SET LOCAL statement_timeout = \(Self.milliseconds(remaining))", [])
        let outer = (statementLimit, cancellation)
        statementLimit = min(remaining, outer.0)
        cancellation = limit
        defer { (statementLimit, cancellation) = outer }
        return try work()
    }

    /// A duration in whole milliseconds, at least 1, as `statement_timeout` takes it.
    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return max(1, min(seconds, Int64(Int32.max) / 1000) * 1000 + attoseconds / 1_000_000_000_000_000)
    }

    func begin() throws {
        try begin(readOnly: false)
    }

    func begin(readOnly: Bool) throws {
        try start(readOnly ? "BEGIN READ ONLY" : "BEGIN")
        readOnlyTransaction = readOnly
    }

    func beginSerializable() throws {
        try start("BEGIN ISOLATION LEVEL SERIALIZABLE")
    }

    private func start(_ statement: String) throws {
        try execute(statement, [])
        inTransaction = true
        readOnlyTransaction = false
        mustRetryTransaction = false
        failedStatement = nil
    }

    private(set) var mustRetryTransaction = false
    /// Why a statement of the open transaction failed: PostgreSQL then refuses the rest of it, and
    /// its COMMIT only rolls back — which must not pass for a commit.
    private var failedStatement: String?

    func commit() throws {
        if let failedStatement {
            try? rollback()
            throw SQLError(mustRetryTransaction ? .serializationFailure : .other,
                           "PostgreSQL rolled the transaction back: a statement in it failed (\(failedStatement))")
        }
        inTransaction = false
        readOnlyTransaction = false
        do {
            try execute("COMMIT", [])
        } catch let error as SQLError where error.kind == .serializationFailure {
            mustRetryTransaction = true   // serializable transactions may fail as late as their commit
            throw error
        }
    }

    func rollback() throws {
        inTransaction = false
        readOnlyTransaction = false
        try execute("ROLLBACK", [])
    }

    @discardableResult
    private func run(_ sql: String, _ arguments: [Value]) throws -> PostgresQueryResult {
        try SQLError.checkStorable(arguments)
        var binds = PostgresBindings(capacity: arguments.count)
        for argument in arguments { try PostgresValues.bind(argument, to: &binds) }
        if let brokenBecause { throw SQLError(.unavailable, "the connection to PostgreSQL was given up: \(brokenBecause)") }
        guard !connection.isClosed else {
            brokenBecause = "PostgreSQL closed it"
            lostConnection = true
            throw SQLError(.unavailable, "PostgreSQL closed the connection (it was stopped, or ended the session)")
        }
        // A limited read is many statements (a cursor's fetches): each checks the limit first.
        if let cancellation {
            if cancellation.isCancelled { throw CancellationError() }
            if cancellation.isExpired { throw SQLError(.timeLimitExceeded, "the statements ran past their time limit") }
        }
        if !readOnlyTransaction && !sql.hasPrefix("BEGIN") && !sql.hasPrefix("SET ") && sql != "COMMIT" && sql != "ROLLBACK" { sentAChange = true }
        let waitLimit = statementLimit + PostgresTimeLimits.answerGrace
        let answer = connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
        let deadline = ContinuousClock.now + waitLimit
        do {
            // Waited for in slices, so a cancelled read gives its connection up within a tenth of a second.
            while ContinuousClock.now < deadline {
                if let result = try answer.wait(atMost: min(.milliseconds(100), deadline - ContinuousClock.now)) { return result }
                if cancellation?.isCancelled == true {
                    abandon(because: "its work was cancelled during a statement")
                    throw CancellationError()
                }
                // postgres-nio may never complete a query on a connection the server closed
                // (a terminated backend, a dropped database): a closed connection fails at once.
                if connection.isClosed {
                    lostConnection = true
                    abandon(because: "PostgreSQL closed it during a statement")
                    throw SQLError(.unavailable, "the connection to PostgreSQL closed before the answer came")
                }
            }
        } catch let error as PSQLError {
            if PostgresValues.isConnectionLost(error) {
                // Its close may not be seen yet (the session's last words come first): given up now,
                // so the pool cannot lend it again before it looks closed.
                lostConnection = true
                abandon(because: "PostgreSQL closed it")
            }
            let failure = PostgresValues.sqlError(error)
            if inTransaction {
                if failure.kind == .serializationFailure { mustRetryTransaction = true }
                if failedStatement == nil { failedStatement = failure.message }
            }
            throw failure
        }
        logger.error("PostgreSQL did not answer a statement within \(waitLimit) (\(sql.prefix(60))…); its connection is closed")
        abandon(because: "PostgreSQL did not answer a statement within \(waitLimit)")
        throw SQLError(.unavailable, "PostgreSQL did not answer within \(waitLimit); the connection was closed")
    }

    /// Closes the connection while a statement is running: PostgreSQL stops the statement when it
    /// sees the connection gone, and the pool never lends the connection again.
    private func abandon(because reason: String) {
        brokenBecause = reason
        inTransaction = false
        connection.closeWithoutWaiting()
    }
}

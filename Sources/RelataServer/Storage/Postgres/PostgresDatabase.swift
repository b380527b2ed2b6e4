import Foundation
import Logging
import NIOCore
import NIOPosix
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
    /// Reads for `asyncRead` wait for their answers here, off the cooperative pool.
    private let readers = DispatchQueue(label: "relata.postgres.readers", attributes: .concurrent)

    /// Connects to the database a URL names: `postgres://user:password@host:port/database`.
    ///
    /// - Parameter maxConnections: the most connections open at once; a unit of work waits for one beyond that.
    /// - Throws: ``RelataError/Code/invalidArgument`` for a URL that is not such a URL (the password is never repeated);
    ///   ``SQLError`` when the first connection fails.
    public init(url: String, maxConnections: Int = 2 * System.coreCount, logger: Logger = Logger(label: "relata.postgres")) throws {
        pool = PostgresConnectionPool(configuration: try Self.configuration(from: url), maxConnections: max(1, maxConnections), logger: logger)
        try pool.withConnection { _ in }   // fails now, with the database's words, rather than at the first request
    }

    /// Closes every connection.
    public func close() {
        pool.closeAll()
    }

    public func read<Result>(_ work: (any SQLConnection) throws -> Result) throws -> Result {
        try pool.withConnection { connection in
            let session = PostgresSQLConnection(connection, logger: pool.logger)
            try session.begin(readOnly: true)
            return try session.committing(work)
        }
    }

    public func asyncRead<Result: Sendable>(_ work: @escaping @Sendable (any SQLConnection) throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            readers.async { continuation.resume(with: Swift.Result { try self.read(work) }) }
        }
    }

    public func write<Result>(_ work: (any SQLConnection) throws -> Result) throws -> Result {
        try pool.withConnection { connection in
            let session = PostgresSQLConnection(connection, logger: pool.logger)
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
    /// ```swift
    /// let settings = try PostgresDatabase.configuration(from: "postgres://relata:secret@127.0.0.1:5432/shop")
    /// let connection = try await PostgresConnection.connect(configuration: settings, id: 1, logger: logger)
    /// ```
    /// - Throws: ``RelataError/Code/invalidArgument`` for a URL that is not such a URL (the password is never repeated).
    public static func configuration(from url: String) throws -> PostgresConnection.Configuration {
        let refused = RelataError(.invalidArgument, "expected a URL such as postgres://user:password@127.0.0.1:5432/database")
        guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme ?? ""),
              let host = components.host, !host.isEmpty, let user = components.user, !user.isEmpty else { throw refused }
        let port = components.port ?? 5432
        guard (1...65535).contains(port) else { throw refused }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        return PostgresConnection.Configuration(host: host, port: port, username: user.removingPercentEncoding ?? user,
                                                password: components.password?.removingPercentEncoding ?? components.password,
                                                database: database.isEmpty ? nil : database, tls: .disable)
    }
}

/// One PostgreSQL connection lent to a unit of work: each statement is sent and its answer awaited.
final class PostgresSQLConnection: SQLConnection {
    private let connection: PostgresConnection
    private let logger: Logger
    var dialect: any SQLDialect { PostgresDialect() }
    private(set) var inTransaction = false

    init(_ connection: PostgresConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
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

    func limitingTime<Result>(to limit: Duration, _ work: () throws -> Result) throws -> Result {
        // Reads run in a transaction of their own, which the setting lasts for.
        let (seconds, attoseconds) = limit.components
        let milliseconds = max(1, Int64(clamping: seconds) &* 1000 &+ attoseconds / 1_000_000_000_000_000)
        _ = try run("SET LOCAL statement_timeout = \(milliseconds)", [])
        return try work()
    }

    func begin() throws {
        try begin(readOnly: false)
    }

    func begin(readOnly: Bool) throws {
        try execute(readOnly ? "BEGIN READ ONLY" : "BEGIN", [])
        inTransaction = true
    }

    func commit() throws {
        inTransaction = false
        try execute("COMMIT", [])
    }

    func rollback() throws {
        inTransaction = false
        try execute("ROLLBACK", [])
    }

    @discardableResult
    private func run(_ sql: String, _ arguments: [Value]) throws -> PostgresQueryResult {
        try SQLError.checkStorable(arguments)
        var binds = PostgresBindings(capacity: arguments.count)
        for argument in arguments { try PostgresValues.bind(argument, to: &binds) }
        do {
            return try connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger).wait()
        } catch let error as PSQLError {
            throw PostgresValues.sqlError(error)
        }
    }
}

import Foundation
import Relata

/// One connection to a SQL database, used by one unit of work at a time and synchronously
/// (rules call `lda` synchronously, so a rule's read is a statement run then and there):
/// statements with bound field values in, rows out as field values.
///
/// The SQL is built by ``SQLStorage`` with the connection's ``SQLDialect``; a connection
/// only runs it and converts values exactly (a decimal never passes through a `Double`).
///
/// ```swift
/// try storage.write { connection in
///     try connection.begin()
///     let changed = try connection.execute("UPDATE \"Clients\" SET \"Active\" = ? WHERE \"ClientId\" = ?", [false, 7])
///     try connection.commit()
/// }
/// ```
public protocol SQLConnection: AnyObject {
    /// How SQL is spelled for this database.
    var dialect: any SQLDialect { get }

    /// Runs a statement that returns no rows.
    /// - Returns: the number of rows it inserted, changed or deleted.
    /// - Throws: ``SQLError``.
    @discardableResult
    func execute(_ sql: String, _ arguments: [Value]) throws -> Int

    /// Runs a query and hands each row to `row`, its columns read as the values of `fields`
    /// (one field per column, in order); `row` returns false to stop early.
    /// - Throws: ``SQLError``; a ``RelataError`` naming the field when a stored value does not fit it.
    func query(_ sql: String, _ arguments: [Value], reading fields: [FieldDefinition],
               row: ([Value]) throws -> Bool) throws

    /// Runs `work` — a query's statements — and fails it with ``SQLError/Kind/timeLimitExceeded``
    /// once `limit`'s time is up, or with `CancellationError` once it is cancelled (its client
    /// went), so no query can hold a connection (and a core) for ever.
    func limiting<Result>(_ limit: WorkLimit, _ work: () throws -> Result) throws -> Result

    /// Starts a transaction that writes (taking the database's write lock at once, where it has one).
    func begin() throws
    /// Starts a transaction in which rules read and then write (an apply, a command): serializable,
    /// so what a rule read cannot change under it before the commit. A transaction that cannot be
    /// ordered with concurrent ones fails, and ``mustRetryTransaction`` says to run it again.
    func beginSerializable() throws
    /// True once a statement of the transaction failed because it could not be ordered with
    /// concurrent transactions (a serialization failure, a deadlock): its work must run again.
    var mustRetryTransaction: Bool { get }
    func commit() throws
    /// Commits so that the changes are durable when it returns, even in a grouped write
    /// (``SQLDatabase/groupedWrite(_:)``), whose ``commit()`` only ends its part of the
    /// transaction the group shares: for work that goes on to tell of its commit (a rule's
    /// `afterCommit`). ``commit()`` by default.
    func commitDurably() throws
    func rollback() throws
    /// Checks the transaction's foreign keys at its commit rather than statement by statement
    /// (the dialect's ``SQLDialect/deferForeignKeys``), so that the order of a unit's statements
    /// does not matter.
    func deferForeignKeys() throws
}

extension SQLConnection {
    func deferForeignKeys() throws { try execute(dialect.deferForeignKeys, []) }
    /// One writer at a time (SQLite) is serializable already.
    func beginSerializable() throws { try begin() }
    func commitDurably() throws { try commit() }
    var mustRetryTransaction: Bool { false }
}

extension SQLConnection {
    /// Every row a query returns, as field values.
    func rows(_ sql: String, _ arguments: [Value], reading fields: [FieldDefinition]) throws -> [[Value]] {
        var rows: [[Value]] = []
        try query(sql, arguments, reading: fields) { rows.append($0); return true }
        return rows
    }

    /// The first column of the first row a query returns (nil when none), read as `field`.
    func value(_ sql: String, _ arguments: [Value], reading field: FieldDefinition) throws -> Value? {
        var first: Value?
        try query(sql, arguments, reading: [field]) { first = $0.first; return false }
        return first
    }
}

/// A SQL database a ``SQLStorage`` keeps its tables in: it lends connections, for reading
/// (beside the writer where the database allows) and for writing (one writer at a time).
public protocol SQLDatabase: Sendable {
    var dialect: any SQLDialect { get }
    /// Runs `work` with a connection in a read-only transaction.
    func read<Result>(_ work: (any SQLConnection) throws -> Result) throws -> Result
    /// Runs `work` with a connection in a read-only transaction, off the caller's thread (`work` may block).
    func asyncRead<Result: Sendable>(_ work: @escaping @Sendable (any SQLConnection) throws -> Result) async throws -> Result
    /// Runs `work` with a connection and no transaction open: the work begins and ends its own.
    func write<Result>(_ work: (any SQLConnection) throws -> Result) throws -> Result
    /// Like ``write(_:)``, but the work's commits may share one commit with other grouped
    /// writes that come at the same time: its changes are durable once the returned
    /// ``PendingCommit`` says so, and nobody may be told of them before. By default the work
    /// commits on its own, as in ``write(_:)``.
    func groupedWrite<Result>(_ work: (any SQLConnection) throws -> Result) throws -> (Result, PendingCommit)
    /// Closes the database's connections when the server stops (nothing by default).
    func close()
    /// How many connections are lent to work now (the server's metrics report it).
    var connectionsInUse: Int { get }
}

extension SQLDatabase {
    public func close() {}

    public func groupedWrite<Result>(_ work: (any SQLConnection) throws -> Result) throws -> (Result, PendingCommit) {
        (try write(work), .committed)
    }
}

extension SQLDatabase {
    /// Runs `work` in a write transaction: committed when it returns, rolled back when it throws.
    @discardableResult
    func inTransaction<Result>(_ work: (any SQLConnection) throws -> Result) throws -> Result {
        try write { connection in
            try connection.begin()
            return try connection.committing(work)
        }
    }
}

extension SQLConnection {
    /// Runs `work` in the transaction just begun: commits when it returns, rolls back when it throws.
    func committing<Result>(_ work: (any SQLConnection) throws -> Result) throws -> Result {
        do {
            let result = try work(self)
            try commit()
            return result
        } catch {
            try? rollback()
            throw error
        }
    }
}

/// A statement the database refused, classified by what it means for a change.
public struct SQLError: Error, CustomStringConvertible {
    public enum Kind: Sendable {
        /// A constraint refused the statement (NOT NULL, a key, a foreign key, a check).
        case constraint
        /// A query ran longer than its time limit and was stopped.
        case timeLimitExceeded
        /// The database could not take the work now: every connection stayed busy, it did not
        /// answer in time, or it is closing. Trying again later may succeed.
        case unavailable
        /// The transaction could not be ordered with concurrent ones (PostgreSQL's serialization
        /// failures and deadlocks): running it again may succeed.
        case serializationFailure
        /// Anything else (a lost connection, a lock that timed out, a statement it could not run).
        case other
    }

    public var kind: Kind
    /// The database's words.
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}

extension SQLError {
    /// Refuses text holding the NUL character (U+0000) before it reaches a database: PostgreSQL
    /// refuses it, and SQLite (through GRDB) would keep the text only up to it — a value cut
    /// short without a word. Every statement's arguments pass here, on every backend.
    static func checkStorable(_ arguments: [Value]) throws {
        for case .string(let text) in arguments where holdsNUL(text) {
            throw SQLError(.other, "text cannot hold the NUL character (U+0000) in the database; the value begins \(String(reflecting: String(text.prefix(20))))")
        }
    }

    /// Whether `text` has a NUL byte: searched by `memchr` when its bytes are contiguous (a
    /// recorded answer is megabytes of text).
    private static func holdsNUL(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { bytes in
            bytes.baseAddress.map { memchr($0, 0, bytes.count) != nil } ?? false
        } ?? text.utf8.contains(0)
    }
}


import Foundation
import GRDB
import GRDBSQLite
import Relata

/// A SQLite database file (or a private in-memory database) through GRDB: a pool in WAL
/// mode, so reads run beside the writer and a long read never holds up an apply.
///
/// ```swift
/// let storage = try SQLStorage(database: SQLiteDatabase(path: "pctrade.sqlite"), schema: schema)
/// ```
public final class SQLiteDatabase: SQLDatabase {
    public var dialect: any SQLDialect { SQLiteDialect() }
    private let queue: any DatabaseWriter
    /// Where asynchronous reads run: lanes with read-only connections of their own (nil for a
    /// private in-memory database, which only GRDB's own connection can see).
    private let lanes: SQLiteReadLanes?
    private let leases = LeaseCount()
    /// The writes sharing a commit (nil for a private in-memory database: nothing to wait for).
    let groups: SQLiteGroupCommit?

    /// How many reads and writes hold a connection now.
    public var connectionsInUse: Int { leases.count }

    /// Opens (or creates) a database file; `:memory:` makes a private in-memory database.
    ///
    /// - Parameters:
    ///   - synchronous: true (the default) returns from a commit once the disk has it (SQLite's
    ///     `synchronous = FULL`): an apply the server answered survives a power cut. False lets
    ///     commits return before (`synchronous = NORMAL`): for data whose last moments a power cut
    ///     may lose, such as sessions.
    ///   - maxReaders: reads that run at once beside the writer (each a connection of its own);
    ///     more wait. A client that stops reading holds one only until the server's write timeout.
    ///     Asynchronous reads (GetData, DA SQL queries) and synchronous ones (rules, logins) each
    ///     have this many connections.
    public convenience init(path: String, synchronous: Bool = true, maxReaders: Int = 16) throws {
        try self.init(path: path, synchronous: synchronous, maxReaders: maxReaders, groups: SQLiteGroupCommit())
    }

    /// Opens a database file whose grouped writes share commits as `groups` says.
    init(path: String, synchronous: Bool = true, maxReaders: Int = 16, groups: SQLiteGroupCommit) throws {
        var configuration = Configuration()
        configuration.maximumReaderCount = max(1, maxReaders)
        configuration.foreignKeysEnabled = true
        // Schemas of one domain share a database file: wait for each other's writes instead of failing.
        configuration.busyMode = .timeout(10)
        // A group of writes leaves its shared transaction open between them (readers refuse it still).
        configuration.allowsUnsafeTransactions = true
        configuration.prepareDatabase { db in db.add(function: Self.like) }
        if path == ":memory:" {
            queue = try DatabaseQueue(configuration: configuration)
            lanes = nil
            self.groups = nil
            return
        }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw RelataError(.fileFailed, "the database cannot be opened: its folder \(folder) does not exist", location: path)
        }
        do {
            let pool = try DatabasePool(path: path, configuration: configuration)
            // GRDB turns WAL on with `synchronous = NORMAL`, after `prepareDatabase`: set on the
            // writer here, the only connection that commits.
            try pool.writeWithoutTransaction { try $0.execute(sql: synchronous ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL") }
            queue = pool
            self.groups = groups
            lanes = SQLiteReadLanes(path: path, count: configuration.maximumReaderCount)
        } catch let error as DatabaseError {
            throw RelataError(.fileFailed, "the database cannot be opened: \(error.message ?? "SQLite error \(error.resultCode.rawValue)")", location: path)
        }
    }

    /// `relata_like(text, pattern, escape)`: see ``SQLiteStatementRuns/like(_:_:escape:)``.
    static let like = DatabaseFunction("relata_like", argumentCount: 3, pure: true) { values in
        SQLiteStatementRuns.like(String.fromDatabaseValue(values[0]), String.fromDatabaseValue(values[1]),
                                 escape: String.fromDatabaseValue(values[2]))
    }

    public func read<Result>(_ work: (any SQLConnection) throws -> Result) throws -> Result {
        try SQLiteConnection.mappingErrors { try queue.read { db in try leases.during { try work(SQLiteConnection(db)) } } }
    }

    public func asyncRead<Result: Sendable>(_ work: @escaping @Sendable (any SQLConnection) throws -> Result) async throws -> Result {
        let leases = self.leases
        guard let lanes else {
            return try await SQLiteConnection.mappingErrors { try await queue.read { db in try leases.during { try work(SQLiteConnection(db)) } } }
        }
        return try await lanes.read { connection in try leases.during { try work(connection) } }
    }

    public func write<Result>(_ work: (any SQLConnection) throws -> Result) throws -> Result {
        try SQLiteConnection.mappingErrors {
            try queue.writeWithoutTransaction { db in
                groups?.commitOpenGroup(on: db)
                // Work that left its transaction open (it should not) must not leave it to the next.
                defer { if db.isInsideTransaction { try? db.rollback() } }
                return try leases.during { try work(SQLiteConnection(db)) }
            }
        }
    }

    /// Like ``write(_:)``, but the work's commits share one durable commit with the grouped
    /// writes that come with it (see ``SQLiteGroupCommit``): its changes are durable once the
    /// returned ``PendingCommit`` says so.
    public func groupedWrite<Result>(_ work: (any SQLConnection) throws -> Result) throws -> (Result, PendingCommit) {
        guard let groups else { return (try write(work), .committed) }
        groups.arriving()
        var entered = false
        // Counted as waiting, it must be counted out even if it never reaches the writer.
        defer { if !entered { groups.leftWithoutWriting() } }
        return try SQLiteConnection.mappingErrors {
            try queue.writeWithoutTransaction { db in
                entered = true
                return try leases.during { try groups.run(on: db, work) }
            }
        }
    }

    public func close() {
        guard let groups else { return }
        _ = queue.writeWithoutTransaction { db in groups.commitOpenGroup(on: db) }
    }
}

/// How many units of work hold a connection of a ``SQLiteDatabase``.
private final class LeaseCount: @unchecked Sendable {
    // @unchecked Sendable: `held` is read and written only while `lock` is held.
    private let lock = NSLock()
    private var held = 0

    var count: Int { lock.withLock { held } }

    func during<Result>(_ work: () throws -> Result) rethrows -> Result {
        lock.withLock { held += 1 }
        defer { lock.withLock { held -= 1 } }
        return try work()
    }
}

/// A GRDB database connection, for the duration of one `read` or `write`.
final class SQLiteConnection: SQLiteSteppingConnection {
    private let db: Database
    var dialect: any SQLDialect { SQLiteDialect() }
    /// The group of writes the connection serves, if it serves a grouped write (see
    /// ``SQLiteGroupCommit``): its transactions are savepoints in the one the group shares.
    private let group: SQLiteGroupCommit?
    private var grouped: Bool { group != nil }
    /// Whether a grouped write's savepoint is open.
    private var inSavepoint = false

    init(_ db: Database, group: SQLiteGroupCommit? = nil) {
        self.db = db
        self.group = group
    }

    /// Runs a statement GRDB prepared and keeps, stepped through SQLite's C API: GRDB's own run
    /// (its arguments reset and set again, its checks before and after each statement, a second
    /// reset) was a quarter of the time a large apply's 100,000 statements took.
    /// GRDB runs the statements that begin and end transactions and savepoints, and so knows them.
    @discardableResult
    func execute(_ sql: String, _ arguments: [Value]) throws -> Int {
        try Self.mappingErrors {
            let handle = try self.handle()
            return try SQLiteStatementRuns.run(try db.cachedStatement(sql: sql).sqliteStatement, on: handle, sql: sql, arguments) { _, step in
                while try step() {}
                return Int(sqlite3_changes(handle))
            }
        }
    }

    /// The statements whose rows are being handed out now: a query run while one of them is
    /// (by the code a row is handed to) gets a statement of its own, since running the cached one
    /// would reset the cursor handing out the rows — which then started again from the first.
    private var iterating: Set<String> = []

    /// Runs a query with its arguments bound and hands `body` its statement and how to step it.
    func stepping<Result>(_ sql: String, _ arguments: [Value],
                          _ body: (SQLiteStatement, () throws -> Bool) throws -> Result) throws -> Result {
        try Self.mappingErrors {
            let nested = !iterating.insert(sql).inserted
            defer { if !nested { iterating.remove(sql) } }
            let statement = nested ? try db.makeStatement(sql: sql) : try db.cachedStatement(sql: sql)
            // A statement of its own is finalized when GRDB's object goes: not before the run ends.
            return try withExtendedLifetime(statement) {
                try SQLiteStatementRuns.run(statement.sqliteStatement, on: try handle(), sql: sql, arguments, body)
            }
        }
    }

    /// The connection's SQLite handle.
    private func handle() throws -> OpaquePointer {
        guard let handle = db.sqliteConnection else { throw SQLError(.other, "the SQLite connection is closed") }
        return handle
    }

    func limiting<Result>(_ limit: WorkLimit, _ work: () throws -> Result) throws -> Result {
        guard let connection = db.sqliteConnection else { return try work() }
        return try SQLiteStatementRuns.limiting(connection, limit, work)
    }

    func begin() throws {
        try Self.mappingErrors {
            guard grouped else { return try db.beginTransaction(.immediate) }
            if !db.isInsideTransaction {
                try Self.run("BEGIN IMMEDIATE", on: db)
                group?.foreignKeysDeferred = false   // SQLite ends the pragma with each transaction
            }
            try Self.run("SAVEPOINT relata_write", on: db)
            inSavepoint = true
        }
    }

    func commit() throws {
        try Self.mappingErrors {
            guard grouped else { return try db.commit() }
            // Foreign keys deferred by this write are checked now, as its own COMMIT would: at the
            // shared one a violation would fail every write of the group. The writes before it
            // left none, so any counted now are this write's.
            var violations: CInt = 0, most: CInt = 0
            if let handle = db.sqliteConnection, sqlite3_db_status(handle, SQLITE_DBSTATUS_DEFERRED_FKS, &violations, &most, 0) == SQLITE_OK,
               violations > 0 {
                throw SQLiteStatementRuns.sqlError(code: SQLITE_CONSTRAINT, message: "FOREIGN KEY constraint failed")
            }
            inSavepoint = false
            try Self.run("RELEASE relata_write", on: db)
        }
    }

    /// Defers the foreign keys; in a grouped write, once per shared transaction: the pragma stays
    /// on until its commit (every grouped write defers them, and checks its own at ``commit()``),
    /// and setting it expires every prepared statement of the connection — each grouped write
    /// that set it had its statements parsed again.
    func deferForeignKeys() throws {
        if let group, group.foreignKeysDeferred { return }
        try execute(dialect.deferForeignKeys, [])
        group?.foreignKeysDeferred = true
    }

    /// Commits, and in a grouped write commits the group's shared transaction too, so that the
    /// changes are durable when it returns.
    func commitDurably() throws {
        try commit()
        if let group { try group.commitOpenGroup(on: db).get() }
    }

    func rollback() throws {
        try Self.mappingErrors {
            guard grouped else { return try db.rollback() }
            inSavepoint = false
            guard db.isInsideTransaction else { return }   // SQLite rolled the whole transaction back already
            try Self.run("ROLLBACK TO relata_write", on: db)
            try Self.run("RELEASE relata_write", on: db)
        }
    }

    /// Rolls back a grouped write's savepoint its work left open, so that none of it is
    /// committed with the group.
    func abandonOpenSavepoint() {
        if inSavepoint { try? rollback() }
    }

    /// Runs one statement of the transaction's bookkeeping (`SAVEPOINT`, `RELEASE`, `COMMIT`, …)
    /// prepared once per connection: `Database.execute(sql:)` parses and authorizes its text on
    /// every call, which cost a small apply more than its own `INSERT`. GRDB learns what each does
    /// to the transaction when it is prepared, and keeps that with the cached statement.
    static func run(_ sql: String, on db: Database) throws {
        try db.cachedStatement(sql: sql).execute()
    }

    /// GRDB's error as a ``SQLError``; any other error as it is.
    static func mapped(_ error: any Error) -> any Error {
        (error as? DatabaseError).map(sqlError) ?? error
    }

    /// A GRDB error as a ``SQLError``.
    private static func sqlError(_ error: DatabaseError) -> SQLError {
        SQLiteStatementRuns.sqlError(code: error.resultCode.rawValue, message: error.message)
    }

    /// GRDB's errors as ``SQLError``s; every other error passes through.
    static func mappingErrors<Result>(_ body: () throws -> Result) throws -> Result {
        do { return try body() } catch { throw mapped(error) }
    }

    static func mappingErrors<Result>(_ body: () async throws -> Result) async throws -> Result {
        do { return try await body() } catch { throw mapped(error) }
    }
}

import GRDB
import GRDBSQLite
import Relata

/// A read-only connection to a SQLite file, driven through SQLite's C API with its statements
/// prepared once and kept — `BEGIN` and `COMMIT` among them. A read lane (``SQLiteReadLanes``)
/// owns one and runs a GetData's or a query's read on it: none of GRDB's pool, queue or
/// savepoint around each read. Used by one read at a time.
final class SQLiteReadConnection: SQLiteSteppingConnection {
    private let handle: OpaquePointer
    /// Statements kept for their next run, by SQL; never more than ``keptLimit``.
    private var kept: [String: SQLiteStatement] = [:]
    /// The statements whose rows are being handed out now: a query run while one of them is
    /// (by the code a row is handed to) gets a statement of its own, since running the kept one
    /// would reset the rows being handed out.
    private var iterating: Set<String> = []
    var dialect: any SQLDialect { SQLiteDialect() }

    /// Statements a connection keeps: a client sending ever new filters makes ever new SQL, so
    /// the kept ones are let go (all but those running) when there are this many.
    static let keptLimit = 64

    /// Opens the file read-only; it must be a database already (the writer made it).
    ///
    /// - Throws: ``SQLError`` with SQLite's words when the file cannot be opened.
    init(path: String) throws {
        var opened: OpaquePointer?
        let code = sqlite3_open_v2(path, &opened, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let opened else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? "SQLite error \(code)"
            sqlite3_close_v2(opened)
            throw SQLError(.other, "SQLite could not open \(path) for reading: \(message)")
        }
        handle = opened
        // As the writer's: wait for a checkpoint or another file's write rather than fail at once.
        sqlite3_busy_timeout(handle, 10_000)
        let registered = sqlite3_create_function_v2(handle, "relata_like", 3, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
                                                    Self.callLike, nil, nil, nil)
        guard registered == SQLITE_OK else {
            sqlite3_close_v2(handle)
            throw SQLError(.other, "SQLite could not add relata_like to a reader of \(path) (code \(registered))")
        }
    }

    deinit {
        for statement in kept.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    /// Runs `work` in a read transaction of its own: one snapshot of the database for all its
    /// statements, ended when it returns or throws.
    func reading<Result>(_ work: (any SQLConnection) throws -> Result) throws -> Result {
        try execute("BEGIN", [])
        do {
            let result = try work(self)
            try execute("COMMIT", [])
            return result
        } catch {
            _ = try? execute("ROLLBACK", [])
            throw error
        }
    }

    @discardableResult
    func execute(_ sql: String, _ arguments: [Value]) throws -> Int {
        try stepping(sql, arguments) { _, step in
            while try step() {}
            return Int(sqlite3_changes(handle))
        }
    }

    func limiting<Result>(_ limit: WorkLimit, _ work: () throws -> Result) throws -> Result {
        try SQLiteStatementRuns.limiting(handle, limit, work)
    }

    func begin() throws { throw Self.notAWriter }
    func commit() throws { throw Self.notAWriter }
    func rollback() throws { throw Self.notAWriter }

    private static let notAWriter = SQLError(.other, "a read runs in a transaction of its own, which it cannot begin or end")

    /// Runs a statement with its arguments bound, and hands `body` the statement and how to
    /// step it; the statement is reset afterwards (a read left open would hold its snapshot).
    func stepping<Result>(_ sql: String, _ arguments: [Value],
                          _ body: (SQLiteStatement, () throws -> Bool) throws -> Result) throws -> Result {
        let nested = !iterating.insert(sql).inserted
        defer { if !nested { iterating.remove(sql) } }
        let statement = nested ? try prepare(sql) : try keptStatement(sql)
        defer { if nested { sqlite3_finalize(statement) } }
        return try SQLiteStatementRuns.run(statement, on: handle, sql: sql, arguments, body)
    }

    private func keptStatement(_ sql: String) throws -> SQLiteStatement {
        if let statement = kept[sql] { return statement }
        if kept.count >= Self.keptLimit {
            for (keptSQL, statement) in kept where !iterating.contains(keptSQL) {
                sqlite3_finalize(statement)
                kept[keptSQL] = nil
            }
        }
        let statement = try prepare(sql)
        kept[sql] = statement
        return statement
    }

    private func prepare(_ sql: String) throws -> SQLiteStatement {
        var statement: SQLiteStatement?
        let code = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            throw SQLiteStatementRuns.sqlError(code: code, message: String(cString: sqlite3_errmsg(handle)))
        }
        return statement
    }

    /// `relata_like` for SQLite's C API: its arguments read as text (anything else is NULL).
    private static let callLike: @convention(c) (OpaquePointer?, CInt, UnsafeMutablePointer<OpaquePointer?>?) -> Void = { context, count, values in
        guard let values, count == 3 else {
            sqlite3_result_null(context)
            return
        }
        func text(_ index: Int) -> String? {
            guard let value = values[index], sqlite3_value_type(value) == SQLITE_TEXT, let bytes = sqlite3_value_text(value) else { return nil }
            return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_value_bytes(value))), as: UTF8.self)
        }
        switch SQLiteStatementRuns.like(text(0), text(1), escape: text(2)) {
        case nil: sqlite3_result_null(context)
        case let matches?: sqlite3_result_int64(context, matches ? 1 : 0)
        }
    }
}

import GRDB
import GRDBSQLite
import Relata

/// What both kinds of SQLite connection do the same way on a prepared statement — the GRDB
/// connection of writes and synchronous reads (``SQLiteConnection``) and the read lanes' own
/// (``SQLiteReadConnection``): hand its rows out, bound its running time, name its errors.
/// Each connection says only how a statement steps to its next row.
enum SQLiteStatementRuns {
    /// Binds the parameters of a statement just reset, straight from the values.
    ///
    /// - Throws: ``SQLError`` when the statement takes another number of values, or SQLite refuses one.
    static func bind(_ arguments: [Value], to statement: SQLiteStatement, sql: String) throws {
        try SQLError.checkStorable(arguments)
        let expected = Int(sqlite3_bind_parameter_count(statement))
        guard expected == arguments.count else {
            throw SQLError(.other, "the statement takes \(expected) values, not \(arguments.count): \(sql)")
        }
        for (index, value) in arguments.enumerated() {
            let code = try SQLiteValues.bind(value, to: statement, at: CInt(index + 1))
            guard code == SQLITE_OK else {
                throw SQLError(.other, "SQLite could not take value \(index + 1) of a statement (code \(code)): \(sql)")
            }
        }
    }

    /// Runs `statement` (prepared on connection `handle`) with `arguments` bound: hands `body`
    /// the statement and how to step it to its next row (`false` after the last), through
    /// SQLite's C API, and resets it and clears its values afterwards — a read left open would
    /// hold its snapshot. `sql` is the statement's text, for an error message.
    ///
    /// - Throws: ``SQLError`` when the values do not fit the statement, or a step fails.
    static func run<Result>(_ statement: SQLiteStatement, on handle: OpaquePointer, sql: String, _ arguments: [Value],
                            _ body: (SQLiteStatement, () throws -> Bool) throws -> Result) throws -> Result {
        sqlite3_reset(statement)   // values cannot be bound to a statement stepped and not reset
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        try bind(arguments, to: statement, sql: sql)
        return try body(statement) {
            switch sqlite3_step(statement) {
            case SQLITE_ROW: return true
            case SQLITE_DONE: return false
            case let code: throw sqlError(code: code, message: String(cString: sqlite3_errmsg(handle)))
            }
        }
    }

    /// Steps a query with `step` (true while it has a row) and hands each row to `row`, its
    /// columns read as `fields`, until `row` returns false.
    static func hand(_ statement: SQLiteStatement, step: () throws -> Bool, reading fields: [FieldDefinition],
                     to row: ([Value]) throws -> Bool) throws {
        // The definitions are read where they are: a copy of one per value would retain each of its texts.
        try fields.withUnsafeBufferPointer { fields in
            while try step() {
                let values = try fields.indices.map { try SQLiteValues.value(statement, CInt($0), for: fields[$0]) }
                guard try row(values) else { return }
            }
        }
    }

    /// Steps a query with `step` and appends each row straight into `batch`'s columns (which
    /// emits each full batch), for at most `limit` rows. Returns how many it read.
    static func append(_ statement: SQLiteStatement, step: () throws -> Bool, limit: Int, into batch: inout RowBatch,
                       emit: (RowStreamEvent) throws -> Void) throws -> Int {
        let fields = batch.builder.fields
        var total = 0
        while total < limit, try step() {
            for field in fields.indices {
                try SQLiteValues.append(statement, CInt(field), as: field, of: fields, to: &batch.builder)
            }
            try batch.endRow(emit: emit)
            total += 1
        }
        return total
    }

    /// Runs `work` on connection `handle`, stopped by SQLite once `limit` expires or is cancelled:
    /// SQLite calls the handler every few thousand instructions, and past the deadline, or once
    /// cancelled, the statement fails as interrupted.
    static func limiting<Result>(_ handle: OpaquePointer, _ limit: WorkLimit, _ work: () throws -> Result) throws -> Result {
        sqlite3_progress_handler(handle, 10_000, { context in
            guard let context else { return 0 }
            let limit = Unmanaged<WorkLimit>.fromOpaque(context).takeUnretainedValue()
            return limit.isExpired || limit.isCancelled ? 1 : 0
        }, Unmanaged.passUnretained(limit).toOpaque())
        defer { sqlite3_progress_handler(handle, 0, nil, nil) }
        do {
            return try work()
        } catch let error as SQLError where error.kind == .timeLimitExceeded && limit.isCancelled {
            throw CancellationError()
        }
    }

    /// SQLite's result code as a ``SQLError``: a constraint refused the statement, or a time
    /// limit interrupted it; anything else is SQLite's own message.
    static func sqlError(code: CInt, message: String?) -> SQLError {
        switch code & 0xFF {   // the primary code of an extended one
        case SQLITE_CONSTRAINT: SQLError(.constraint, message ?? "a constraint refused the statement")
        case SQLITE_INTERRUPT: SQLError(.timeLimitExceeded, message ?? "interrupted")
        default: SQLError(.other, message ?? "SQLite error \(code)")
        }
    }

    /// `relata_like(text, pattern, escape)`: DA SQL's `LIKE` — Relata's own matcher, which folds
    /// case across Unicode where SQLite's `LIKE` folds only ASCII — so a query with `LIKE`
    /// compiles for SQLite and answers as everywhere else. NULL (or anything but text) in, NULL out.
    static func like(_ text: String?, _ pattern: String?, escape: String?) -> Bool? {
        guard let text, let pattern else { return nil }
        return LikePattern(pattern, escape: escape?.first).matches(text)
    }
}

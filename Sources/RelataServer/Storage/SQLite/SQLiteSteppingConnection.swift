import GRDB
import Relata

/// A SQLite connection that runs a statement by stepping it through SQLite's C API
/// (``SQLiteStatementRuns/run(_:on:sql:_:_:)``): each kind (``SQLiteConnection`` on GRDB,
/// ``SQLiteReadConnection`` on a raw handle) says only how it prepares and keeps its
/// statements, and both hand their rows out through this one code.
protocol SQLiteSteppingConnection: SQLConnection, RowBatchReading {
    /// Runs `sql` with `arguments` bound, and hands `body` the statement and how to step it to
    /// its next row (`false` after the last).
    func stepping<Result>(_ sql: String, _ arguments: [Value],
                          _ body: (SQLiteStatement, () throws -> Bool) throws -> Result) throws -> Result
}

extension SQLiteSteppingConnection {
    func query(_ sql: String, _ arguments: [Value], reading fields: [FieldDefinition], row: ([Value]) throws -> Bool) throws {
        try stepping(sql, arguments) { statement, step in
            try SQLiteStatementRuns.hand(statement, step: step, reading: fields, to: row)
        }
    }

    func query(_ sql: String, _ arguments: [Value], limit: Int, into batch: inout RowBatch,
               emit: (RowStreamEvent) throws -> Void) throws -> Int {
        try stepping(sql, arguments) { statement, step in
            try SQLiteStatementRuns.append(statement, step: step, limit: limit, into: &batch, emit: emit)
        }
    }
}

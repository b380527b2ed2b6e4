import CBenchmarkSupport
import Foundation

/// The same table in an in-memory SQLite database: the users' usual alternative.
final class SQLiteTable {
    private var db: OpaquePointer?

    init() {
        sqlite3_open(":memory:", &db)
        exec("CREATE TABLE Clients (Id INTEGER PRIMARY KEY, Name TEXT, City TEXT, Balance REAL, Since REAL, Active INTEGER)")
    }

    deinit { sqlite3_close(db) }

    func exec(_ sql: String) {
        var message: UnsafeMutablePointer<CChar>?
        if sqlite3_exec(db, sql, nil, nil, &message) != SQLITE_OK {
            fatalError("SQLite: \(String(cString: message!)) in \(sql)")
        }
    }

    func load(_ records: [ClientRecord]) {
        exec("BEGIN")
        var statement: OpaquePointer?
        sqlite3_prepare_v2(db, "INSERT INTO Clients VALUES (?, ?, ?, ?, ?, ?)", -1, &statement, nil)
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for record in records {
            sqlite3_bind_int64(statement, 1, record.id)
            sqlite3_bind_text(statement, 2, record.name, -1, transient)
            sqlite3_bind_text(statement, 3, record.city, -1, transient)
            sqlite3_bind_double(statement, 4, record.balance)
            sqlite3_bind_double(statement, 5, record.since.timeIntervalSince1970)
            sqlite3_bind_int(statement, 6, record.active ? 1 : 0)
            sqlite3_step(statement)
            sqlite3_reset(statement)
        }
        sqlite3_finalize(statement)
        exec("COMMIT")
    }

    /// Runs a query and collects the first column (the row ids), as an app would.
    func ids(_ sql: String) -> [Int64] {
        var result: [Int64] = []
        withStatement(sql) { statement in
            while sqlite3_step(statement) == SQLITE_ROW { result.append(sqlite3_column_int64(statement, 0)) }
        }
        return result
    }

    /// A prepared statement for the length of `body`.
    func withStatement(_ sql: String, _ body: (OpaquePointer?) -> Void) {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
            fatalError("SQLite: \(String(cString: sqlite3_errmsg(db))) in \(sql)")
        }
        defer { sqlite3_finalize(statement) }
        body(statement)
    }

    static var memoryUsed: Int { Int(sqlite3_memory_used()) }
}

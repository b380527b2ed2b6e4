import Relata

/// Reads the answer of a checked DA SQL query: compiled to one SQL statement when the
/// database answers it exactly as DA SQL does (``SQLQueryCompiler``), its rows streamed
/// in batches as the database returns them; otherwise computed by the in-memory engine
/// every site runs, over the tables the query reads (loaded whole for the request).
/// Either way the client receives the same rows.
struct QueryReader {
    let storage: SQLStorage
    /// How long the compiled query may run in the database.
    var timeLimit: Duration = .seconds(30)
    var batchRows = 4096
    var batchBytes = 1 << 20

    /// How the last answer was computed (for tests and logs).
    enum Path: Equatable, Sendable {
        case compiled(sql: String)
        case engine(reason: String)
    }

    /// Emits the answer as the request's table, its rows in batches, and its end.
    @discardableResult
    func read(_ request: DataRequest, query: DASQLQuery, resolved: ResolvedQuery, in connection: any SQLConnection,
              emit: (RowStreamEvent) throws -> Void) throws -> Path {
        let limit = request.maxRecords ?? Int.max
        var compiler = SQLQueryCompiler(storage: storage, parameters: request.parameters)
        let compiled: CompiledQuery
        do {
            compiled = try compiler.compile(resolved)
        } catch let notExact as SQLQueryCompiler.NotExact {
            let tables = try query.tableNames.map { try storage.loadTable($0, in: connection) }
            let rows = try query.rows(of: resolved, over: tables, parameters: request.parameters)
            try emit(.table(name: request.table, fields: resolved.fields, expectedRows: min(rows.count, limit)))
            var batch = RowBatch(width: resolved.fields.count, rows: batchRows, bytes: batchBytes)
            for row in rows.prefix(limit) { try batch.append(row, emit: emit) }
            try batch.flush(emit: emit)
            try emit(.tableEnd(rows: min(rows.count, limit)))
            return .engine(reason: notExact.description)
        }

        let count = try databaseAnswer {
            try connection.limitingTime(to: timeLimit) {
                try connection.value("SELECT COUNT(*) FROM (\(compiled.sql)) AS relata_answer", compiled.arguments, reading: SQLStorage.count)
            }
        }?.integerValue ?? 0
        try emit(.table(name: request.table, fields: resolved.fields, expectedRows: min(Int(count), limit)))
        var batch = RowBatch(width: compiled.columns.count, rows: batchRows, bytes: batchBytes)
        var total = 0
        if limit > 0 {
            try databaseAnswer {
                try connection.limitingTime(to: timeLimit) {
                    try connection.query(compiled.sql, compiled.arguments, reading: compiled.columns) { row in
                        try batch.append(row, emit: emit)
                        total += 1
                        return total < limit
                    }
                }
            }
        }
        try batch.flush(emit: emit)
        try emit(.tableEnd(rows: total))
        return .compiled(sql: compiled.sql)
    }

    /// An integer overflowing in the database fails the query as it fails in Relata: an
    /// evaluation error, not a server failure; so does a query stopped at its time limit.
    private func databaseAnswer<Result>(_ work: () throws -> Result) throws -> Result {
        do {
            return try work()
        } catch let error as SQLError where error.kind == .timeLimitExceeded {
            throw RelataError(.timeLimitExceeded, "the query ran longer than \(timeLimit) and was stopped; narrow it (WHERE, a more selective join, LIMIT)")
        } catch let error as SQLError where error.message.contains("overflow") || error.message.contains("out of range") {
            throw RelataError(.expressionEvaluation, "an integer in the query overflows 64 bits (the database says: \(error.message))")
        }
    }
}

import Relata

/// Reads the answer of a checked DA SQL query: compiled to one SQL statement when the
/// database answers it exactly as DA SQL does (``SQLQueryCompiler``), its rows streamed
/// in batches as the database returns them; otherwise computed by the in-memory engine
/// every site runs, over the tables the query reads (loaded for the request).
/// Either way the client receives the same rows.
struct QueryReader {
    let storage: SQLStorage
    /// Bounds computing the answer — the compiled query in the database, or the engine — not
    /// streaming it to the client; cancelled when the client goes.
    var workLimit = WorkLimit(timeLimit: .seconds(30))
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
            let rows = try answerWithinTheLimit {
                // Loading the tables counts against the limit too (and stops when the client goes).
                let tables = try connection.limiting(workLimit) {
                    try tablesForTheEngine(query: query, resolved: resolved, parameters: request.parameters, in: connection)
                }
                return try query.rows(of: resolved, over: tables, parameters: request.parameters, limit: workLimit)
            }
            try emit(.table(name: request.table, fields: resolved.fields, expectedRows: min(rows.count, limit)))
            var batch = RowBatch(fields: resolved.fields, rows: batchRows, bytes: batchBytes)
            for row in rows.prefix(limit) { try batch.append(row, emit: emit) }
            try batch.flush(emit: emit)
            try emit(.tableEnd(rows: min(rows.count, limit)))
            return .engine(reason: notExact.description)
        }

        // The count computes the whole answer, so it is what the time limit bounds; the rows then
        // stream at the client's pace, which no limit should count against the query.
        let count = try answerWithinTheLimit {
            try connection.limiting(workLimit) {
                try connection.value("SELECT COUNT(*) FROM (\(compiled.sql)) AS relata_answer", compiled.arguments, reading: SQLStorage.count)
            }
        }?.integerValue ?? 0
        try emit(.table(name: request.table, fields: resolved.fields, expectedRows: min(Int(count), limit)))
        var batch = RowBatch(fields: resolved.fields, rows: batchRows, bytes: batchBytes)
        let total = try answerWithinTheLimit {
            try connection.query(compiled.sql, compiled.arguments, limit: limit, into: &batch, emit: emit)
        }
        try batch.flush(emit: emit)
        try emit(.tableEnd(rows: total))
        return .compiled(sql: compiled.sql)
    }

    /// The tables the engine answers a query over: each read whole, except a table the query
    /// reads once whose first conditions can run before the joins (``EarlyConditions``) and
    /// compile exactly — only the rows they keep are read. The engine evaluates the whole
    /// query on them, as on whole tables, with the same answer.
    func tablesForTheEngine(query: DASQLQuery, resolved: ResolvedQuery, parameters: [String: Value],
                                    in connection: any SQLConnection) throws -> [DataTable] {
        let statement = resolved.statement
        let sources = [statement.from] + statement.joins.map(\.table)
        var typed: [String: DataTable] = [:]
        for source in sources { typed[source.scopeName.lowercased()] = try storage.emptyTable(source.name) }
        let early = EarlyConditions.of(statement, tables: typed, parameters: parameters)
        let reads = Dictionary(grouping: statement.tableNames, by: { $0.lowercased() }).mapValues(\.count)
        return try query.tableNames.map { name in
            if reads[name.lowercased()] == 1,
               let source = sources.first(where: { $0.name.equalsIgnoringCase(name) }),
               let conditions = early[source.scopeName.lowercased()],
               let definition = try? storage.definition(of: source.name) {
                var compiler = SQLQueryCompiler(storage: storage, parameters: parameters)
                if let (sql, arguments) = try? compiler.condition(conditions, over: QueryCatalog.Table(name: definition.name, fields: definition.fields),
                                                                 calledBy: source.scopeName) {
                    return try storage.loadTable(name, where: sql, alias: "t1", arguments: arguments, in: connection)
                }
            }
            return try storage.loadTable(name, in: connection)
        }
    }

    /// An integer overflowing in the database fails the query as it fails in Relata: an
    /// evaluation error, not a server failure; so does a query stopped at its time limit, in the
    /// database or in the engine.
    private func answerWithinTheLimit<Result>(_ work: () throws -> Result) throws -> Result {
        do {
            return try work()
        } catch let error as SQLError where error.kind == .timeLimitExceeded {
            throw Self.timeLimitExceeded(workLimit)
        } catch is WorkLimit.Exceeded {
            throw Self.timeLimitExceeded(workLimit)
        } catch let error as SQLError where error.message.contains("overflow") || error.message.contains("out of range") {
            throw RelataError(.expressionEvaluation, "an integer in the query overflows 64 bits (the database says: \(error.message))")
        }
    }

    static func timeLimitExceeded(_ limit: WorkLimit) -> RelataError {
        RelataError(.timeLimitExceeded, "the query ran longer than \(limit.timeLimit ?? .zero) and was stopped; narrow it (WHERE, a more selective join, LIMIT)")
    }
}

import Foundation
import Relata

/// Reads what one ``DataRequest`` selects, a batch at a time, so a table of any size
/// streams through a bounded amount of memory: the part of the where expression SQL
/// decides exactly narrows the query (``SQLPrefilter``), and each batch of stored rows is
/// then filtered by the whole expression with the same evaluator as every other site —
/// unless SQL decides all of it, when the rows go straight from the database to the answer.
struct TableReader {
    let storage: SQLStorage
    /// Makes the tables a where expression is evaluated on (with their lookup fields, and
    /// calculated fields when it has a runtime).
    let data: SQLDataAccess
    /// The most rows in one batch, and the bytes after which a batch is sent early.
    var batchRows = 4096
    var batchBytes = 1 << 20
    /// Checked before each batch the where expression filters: past its time or cancelled, the read stops.
    var workLimit: WorkLimit? = nil

    /// Emits the request's table, its rows in batches, and its end.
    func read(_ request: DataRequest, expression: Relata.Expression?, in connection: any SQLConnection,
              emit: (RowStreamEvent) throws -> Void) throws {
        let definition = try storage.definition(of: request.table)
        let stored = definition.fields
        let sent = try (request.fields ?? stored.map(\.name)).map { name in
            guard let index = stored.firstIndex(where: { $0.name.equalsIgnoringCase(name) }) else {
                throw RelataError(.unknownField, "the table has no field '\(name)'", table: definition.name, field: name)
            }
            return index
        }
        let limit = request.maxRecords ?? Int.max
        var condition = ""
        var arguments: [Value] = []
        // What the rows read still go through: nothing when SQL decides the whole expression.
        var filter = expression
        if let expression, let prefilter = SQLPrefilter(fields: stored, dialect: storage.dialect,
                                                         column: { storage.sqlColumn($0, of: definition.name) })
            .condition(for: expression, parameters: request.parameters) {
            condition = " WHERE \(prefilter.sql)"
            arguments = prefilter.arguments
            if prefilter.isWhole { filter = nil }
        }
        let from = " FROM \(storage.sqlTable(definition.name))\(condition)"
        // The table's header says how many rows to expect. It waits for the first full batch:
        // an answer that ends before one knows its count exactly, from what it sent; only a
        // longer one asks the database (in the read's transaction, while its rows are read) how
        // many rows SQL selects — what the where expression keeps of them is not known yet.
        var headerSent = false
        func sendHeader(expectedRows: Int) throws {
            headerSent = true
            try emit(.table(name: definition.name, fields: sent.map { stored[$0] }, expectedRows: min(expectedRows, limit)))
        }
        func emitting(_ event: RowStreamEvent) throws {
            if !headerSent {
                let count = try connection.value("SELECT COUNT(*)\(from)", arguments, reading: SQLStorage.count)?.integerValue ?? 0
                try sendHeader(expectedRows: Int(clamping: count))
            }
            try emit(event)
        }

        // Without a filter only the fields sent are read; with one, every stored field
        // (the expression and the table's lookup fields may use any of them).
        let read = filter == nil ? sent : Array(stored.indices)
        let columns = read.map { storage.sqlColumn(stored[$0].name, of: definition.name) }.joined(separator: ", ")
        let select = "SELECT \(columns)\(from)\(storage.orderByKey(of: definition.name))"
        func namingTheTable<Result>(_ work: () throws -> Result) throws -> Result {
            do {
                return try work()
            } catch var error as RelataError where error.table == nil {
                error.table = definition.name
                throw error
            }
        }
        func eachStoredRow(_ body: ([Value]) throws -> Bool) throws {
            guard limit > 0 else { return }
            try namingTheTable { try connection.query(select, arguments, reading: read.map { stored[$0] }, row: body) }
        }
        var batch = RowBatch(fields: sent.map { stored[$0] }, rows: batchRows, bytes: batchBytes)
        var total = 0
        if let expression = filter {
            // A chunk of stored rows at a time goes through a table of its own, where the whole
            // expression decides; each chunk's lookup rows are loaded for it.
            data.lookupsLoadOnDemand = true
            let table = try data.tableOfItsOwn(definition.name)
            var chunk: [[Value]] = []
            chunk.reserveCapacity(batchRows)
            func filterChunk() throws {
                try checkWorkLimit()
                try data.loadLookupRows(of: table, pointedToBy: chunk)
                try table.loadRows(chunk)
                for row in try table.rows(where: expression, parameters: request.parameters).prefix(limit - total) {
                    try batch.append(sent.map { row[stored[$0].name] }, emit: emitting)
                    total += 1
                }
                table.discardAllRows()
                chunk.removeAll(keepingCapacity: true)
            }
            try eachStoredRow { values in
                chunk.append(values)
                if chunk.count >= batchRows { try filterChunk() }
                return total < limit
            }
            if !chunk.isEmpty, total < limit { try filterChunk() }
        } else {
            total = try namingTheTable { try connection.query(select, arguments, limit: limit, into: &batch, emit: emitting) }
        }
        // Every row is read and filtered (or the limit reached): the count is exact.
        if !headerSent { try sendHeader(expectedRows: total) }
        try batch.flush(emit: emit)
        try emit(.tableEnd(rows: total))
    }

    private func checkWorkLimit() throws {
        do {
            try workLimit?.check()
        } catch let exceeded as WorkLimit.Exceeded {
            throw RelataError(.timeLimitExceeded, "filtering the rows ran longer than \(exceeded.timeLimit) and was stopped; narrow the where expression")
        }
    }
}

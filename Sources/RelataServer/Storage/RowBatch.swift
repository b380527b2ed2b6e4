import Relata

/// The rows gathered for the next `rows` event, sent when it holds `rows` rows or about
/// `bytes` bytes.
struct RowBatch {
    let rows: Int
    let bytes: Int
    /// Where the values go: call its `append`s for each field of a row, then ``endRow(emit:)``.
    var builder: RowStreamRowsBuilder

    init(fields: [FieldDefinition], rows: Int, bytes: Int) {
        self.rows = rows
        self.bytes = bytes
        builder = RowStreamRowsBuilder(fields: fields)
    }

    /// Appends a row of values already of their fields' types.
    mutating func append(_ row: [Value], emit: (RowStreamEvent) throws -> Void) throws {
        builder.append(row: row)
        try sendIfFull(emit: emit)
    }

    /// Ends a row whose values went into ``builder``.
    mutating func endRow(emit: (RowStreamEvent) throws -> Void) throws {
        builder.endRow()
        try sendIfFull(emit: emit)
    }

    private mutating func sendIfFull(emit: (RowStreamEvent) throws -> Void) throws {
        if builder.count >= rows || builder.bytes >= bytes { try flush(emit: emit) }
    }

    mutating func flush(emit: (RowStreamEvent) throws -> Void) throws {
        guard builder.count > 0 else { return }
        try emit(.rows(builder.take()))
    }
}

/// A connection that reads a query's rows straight into a ``RowBatch``'s columns, without
/// a `Value` per cell.
protocol RowBatchReading {
    /// Runs a query and appends each row, its columns read as the batch's fields, to `batch`
    /// (which emits each full batch); stops after `limit` rows. Returns how many it read.
    func query(_ sql: String, _ arguments: [Value], limit: Int, into batch: inout RowBatch,
               emit: (RowStreamEvent) throws -> Void) throws -> Int
}

extension SQLConnection {
    /// Runs a query and appends each row, its columns read as the batch's fields, to `batch`
    /// (which emits each full batch) — straight into its columns where the connection can;
    /// stops after `limit` rows. Returns how many it read.
    func query(_ sql: String, _ arguments: [Value], limit: Int, into batch: inout RowBatch,
               emit: (RowStreamEvent) throws -> Void) throws -> Int {
        guard limit > 0 else { return 0 }
        if let direct = self as? any RowBatchReading {
            return try direct.query(sql, arguments, limit: limit, into: &batch, emit: emit)
        }
        var total = 0
        try query(sql, arguments, reading: batch.builder.fields) { row in
            try batch.append(row, emit: emit)
            total += 1
            return total < limit
        }
        return total
    }
}

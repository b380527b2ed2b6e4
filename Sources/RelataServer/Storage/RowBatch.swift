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

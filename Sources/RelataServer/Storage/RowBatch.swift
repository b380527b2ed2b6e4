import Relata

/// The rows gathered for the next `rows` event, sent when it is full.
struct RowBatch {
    let width: Int
    let rows: Int
    let bytes: Int
    private var values: [Value] = []
    private var count = 0
    private var size = 0

    init(width: Int, rows: Int, bytes: Int) {
        self.width = width
        self.rows = rows
        self.bytes = bytes
        values.reserveCapacity(width * min(rows, 4096))
    }

    mutating func append(_ row: [Value], emit: (RowStreamEvent) throws -> Void) throws {
        values.append(contentsOf: row)
        count += 1
        for value in row {
            switch value {
            case .string(let text): size += text.utf8.count + 4
            case .blob(let data): size += data.count + 8
            default: size += 8
            }
        }
        if count >= rows || size >= bytes { try flush(emit: emit) }
    }

    mutating func flush(emit: (RowStreamEvent) throws -> Void) throws {
        guard count > 0 else { return }
        try emit(.rows(values: values, count: count))
        values.removeAll(keepingCapacity: true)
        count = 0
        size = 0
    }
}

import Foundation

/// Reads a ``RowStream`` as its bytes arrive: feed each chunk to ``append(_:)`` and act on
/// the events it returns; call ``finish()`` when the input ends. Every length and count is
/// checked against the data and the stream's order (rows only inside a table, a table's
/// end matching the rows sent), so a damaged or hostile answer is an error, never a trap.
///
/// ```swift
/// var reader = RowStreamReader()
/// for try await chunk in body {
///     for event in try reader.append(chunk) { handle(event) }
/// }
/// try reader.finish()
/// ```
public struct RowStreamReader {
    private var buffer: [UInt8] = []
    private var consumed = 0
    private var started = false
    private var table: (name: String, fields: [FieldDefinition], rows: Int)?
    /// Whether the end (or an error) frame was read.
    public private(set) var isComplete = false
    /// Bytes read so far.
    public private(set) var bytesRead = 0

    public init() {}

    /// The events the bytes complete (a frame split across chunks comes with the chunk that ends it).
    ///
    /// - Throws: ``RelataError/Code/invalidResponse`` naming what is wrong.
    public mutating func append(_ bytes: some Collection<UInt8>) throws -> [RowStreamEvent] {
        bytesRead += bytes.count
        if consumed > 0, consumed >= buffer.count / 2 {
            buffer.removeFirst(consumed)
            consumed = 0
        }
        buffer.append(contentsOf: bytes)
        var events: [RowStreamEvent] = []
        if !started {
            guard buffer.count - consumed >= 12 else { return [] }
            guard Array(buffer[consumed..<consumed + 8]) == RowStream.magic else { throw Self.damaged("it is not a Relata row stream") }
            let version = buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: consumed + 8, as: UInt32.self) }
            guard UInt32(littleEndian: version) == RowStream.version else {
                throw Self.damaged("it is version \(UInt32(littleEndian: version)) of the row stream; this reader knows version \(RowStream.version)")
            }
            consumed += 12
            started = true
        }
        while buffer.count - consumed >= 5 {
            guard !isComplete else { throw Self.damaged("bytes follow the end of the answer") }
            let (kindByte, length) = buffer.withUnsafeBytes { raw in
                (raw[consumed], Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: consumed + 1, as: UInt32.self))))
            }
            guard let kind = RowStream.Kind(rawValue: kindByte) else { throw Self.damaged("\(kindByte) is not a frame kind") }
            guard length <= RowStream.maxFrameBytes else {
                throw Self.damaged("a frame claims \(length) bytes, more than the \(RowStream.maxFrameBytes) allowed")
            }
            guard buffer.count - consumed - 5 >= length else { break }
            let start = consumed + 5
            events.append(try buffer.withUnsafeBytes { raw in
                try frame(kind, UnsafeRawBufferPointer(rebasing: raw[start..<start + length]))
            })
            consumed = start + length
        }
        return events
    }

    /// Checks that the stream ended where an answer may end.
    ///
    /// - Throws: ``RelataError/Code/invalidResponse`` when the input stopped before the end frame.
    public func finish() throws {
        guard isComplete else {
            throw Self.damaged(table.map { "the answer stops inside table \($0.name) after \($0.rows) rows" } ?? "the answer stops before its end")
        }
    }

    private mutating func frame(_ kind: RowStream.Kind, _ payload: UnsafeRawBufferPointer) throws -> RowStreamEvent {
        var reader = BinaryReader(payload, context: "the row stream")
        let event: RowStreamEvent
        do {
            switch kind {
            case .schema:
                guard table == nil else { throw Self.damaged("the schema comes inside a table") }
                event = .schema(Data(try reader.readBytes()))
            case .table:
                guard table == nil else { throw Self.damaged("table \(table?.name ?? "") has no end") }
                let name = try reader.readString()
                let fields = try JSONDecoder().decode([FieldDefinition].self, from: Data(try reader.readBytes()))
                // Rows of no fields take no bytes: their count could not be checked against the data.
                guard !fields.isEmpty else { throw Self.damaged("table \(name) has no fields") }
                _ = try DataTable(name: name, fields: fields)
                let expected = try reader.read(UInt64.self)
                table = (name, fields, 0)
                event = .table(name: name, fields: fields, expectedRows: Int(clamping: expected))
            case .rows:
                guard let current = table else { throw Self.damaged("rows come outside a table") }
                reader.context = "table \(current.name)"
                let count = Int(try reader.read(UInt32.self))
                var columns: [Column] = []
                for field in current.fields {
                    reader.context = "table \(current.name), field \(field.name)"
                    let column = Column(for: field.type)
                    try column.readBriefcase(from: &reader, count: count, type: field.type)
                    columns.append(column)
                }
                table?.rows += count
                event = .rows(RowStreamRows(columns: columns, count: count))
            case .tableEnd:
                guard let current = table else { throw Self.damaged("a table ends that did not start") }
                let rows = try reader.read(UInt64.self)
                guard rows == UInt64(current.rows) else {
                    throw Self.damaged("table \(current.name) says it sent \(rows) rows; \(current.rows) arrived")
                }
                table = nil
                event = .tableEnd(rows: current.rows)
            case .end:
                guard table == nil else { throw Self.damaged("the answer ends inside table \(table?.name ?? "")") }
                isComplete = true
                event = .end
            case .error:
                isComplete = true
                event = .error(Data(try reader.readBytes()))
            }
        } catch let error as RelataError where error.code == .invalidBriefcase {
            throw Self.damaged(error.message)
        } catch let error as DecodingError {
            throw Self.damaged("a table's field definitions do not decode (\(error))")
        } catch let error as RelataError where error.code == .invalidDefinition {
            throw Self.damaged("a table's fields cannot make a table (\(error.message))")
        }
        guard reader.remaining == 0 else { throw Self.damaged("a frame has \(reader.remaining) bytes more than its content") }
        return event
    }

    static func damaged(_ message: String) -> RelataError {
        RelataError(.invalidResponse, "the server's answer cannot be read: \(message)")
    }
}

/// Collects the tables of a ``RowStream`` into ``DataTable``s (rows unchanged, as fetched),
/// chunk by chunk or from a whole answer.
///
/// ```swift
/// var answer = RowStreamTables()
/// for chunk in chunks { try answer.consume(chunk) }   // as the bytes arrive
/// let orders = answer.tables[0]
/// ```
public struct RowStreamTables {
    public private(set) var tables: [DataTable] = []
    /// The schema's JSON, when the stream carried it.
    public private(set) var schemaJSON: Data?
    /// The error answer's JSON, when the server failed after the answer began.
    public private(set) var errorJSON: Data?
    private var reader = RowStreamReader()

    public init() {}

    /// Reads a complete stream.
    ///
    /// - Throws: ``RelataError/Code/invalidResponse`` for a damaged or cut-short stream; the
    ///   errors of ``DataTable/loadRows(_:)`` for rows that do not fit their table.
    public init(_ bytes: some Collection<UInt8>) throws {
        try consume(bytes)
        try reader.finish()
    }

    /// Reads the next bytes of the stream; call ``finish()`` when the input ends.
    public mutating func consume(_ bytes: some Collection<UInt8>) throws {
        for event in try reader.append(bytes) {
            switch event {
            case .schema(let json): schemaJSON = json
            case .table(let name, let fields, _): tables.append(try DataTable(name: name, fields: fields))
            case .rows(let rows):
                try tables.last?.loadRows(rows)
            case .tableEnd, .end: break
            case .error(let json): errorJSON = json
            }
        }
    }

    /// Checks that the stream ended with its end (or error) frame.
    public func finish() throws { try reader.finish() }
}

import Foundation

/// The binary encoding of `GetData` answers (`Documentation/Protocol.md`): a stream of
/// frames a server writes as it reads rows and a client reads as they arrive, so a large
/// table is never built whole on the server and a client can report progress.
///
///     "RELATARS"  version u32
///     frame*      kind u8, payload length u32, payload
///
/// | kind | frame      | payload                                                                  |
/// |------|------------|--------------------------------------------------------------------------|
/// | 1    | schema     | the `GetSchema` answer as JSON (when the request asked for it)            |
/// | 2    | table      | name, field definitions (JSON), expected rows u64 (at most this many)     |
/// | 3    | rows       | row count u32, then each field's column as the briefcase stores it        |
/// | 4    | table end  | the table's row count u64                                                 |
/// | 5    | end        | nothing: the answer is complete                                          |
/// | 6    | error      | the protocol's error answer as JSON; nothing after it                     |
///
/// Numbers are little-endian; strings are a u32 length and UTF-8. A column is a NULL
/// bitmap and the values, exactly as in a briefcase table, so both use one encoding.
public enum RowStream {
    /// The media type of the encoding (`Accept` and `Content-Type`).
    public static let contentType = "application/vnd.relata.rows"
    static let magic = Array("RELATARS".utf8)
    static let version: UInt32 = 1
    /// The largest frame a reader accepts (a writer never sends one larger).
    public static let maxFrameBytes = 64 << 20

    enum Kind: UInt8 {
        case schema = 1, table, rows, tableEnd, end, error
    }
}

/// What a row stream says, in order.
public enum RowStreamEvent: Sendable {
    /// The schema, as the JSON of a `GetSchema` answer.
    case schema(Data)
    /// A table starts: its fields (those asked for) and at most how many rows follow.
    case table(name: String, fields: [FieldDefinition], expectedRows: Int)
    /// Rows of the current table, one value per field.
    case rows(RowStreamRows)
    /// The current table is complete with this many rows.
    case tableEnd(rows: Int)
    /// The answer is complete.
    case end
    /// The server failed after the answer began: its error answer as JSON.
    case error(Data)
}

import Foundation
import GRDB
import GRDBSQLite
import Relata

/// Field values to and from SQLite, exactly: decimals and dates as text (never a binary
/// float), GUIDs as text, blobs as blobs, booleans as 0 and 1.
enum SQLiteValues {
    /// Binds a value to parameter `index` (from 1) of a statement: numbers as numbers,
    /// booleans as 0 and 1, decimals, dates and GUIDs as their text, blobs as blobs; SQLite
    /// copies text and blobs. Returns SQLite's result code.
    ///
    /// - Throws: ``SQLError`` for text or a blob longer than SQLite takes (2 GiB).
    static func bind(_ value: Value, to statement: SQLiteStatement, at index: CInt) throws -> CInt {
        switch value {
        case .null: return sqlite3_bind_null(statement, index)
        case .integer(let integer): return sqlite3_bind_int64(statement, index, integer)
        case .double(let double): return sqlite3_bind_double(statement, index, double)
        case .boolean(let bool): return sqlite3_bind_int64(statement, index, bool ? 1 : 0)
        case .string, .decimal, .date, .guid:
            var text = value.text
            return try text.withUTF8 { bytes in
                // A null pointer would bind NULL: empty text is bound from a literal.
                guard let base = bytes.baseAddress else { return sqlite3_bind_text(statement, index, "", 0, transient) }
                return sqlite3_bind_text(statement, index, base, try length(of: bytes.count), transient)
            }
        case .blob(let data):
            // A null pointer would bind NULL: an empty blob is a zero-length blob.
            guard !data.isEmpty else { return sqlite3_bind_zeroblob(statement, index, 0) }
            return try data.withUnsafeBytes { bytes in
                sqlite3_bind_blob(statement, index, bytes.baseAddress, try length(of: bytes.count), transient)
            }
        }
    }

    /// SQLite's `SQLITE_TRANSIENT`: it copies the bytes before the bind returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private static func length(of count: Int) throws -> CInt {
        guard let length = CInt(exactly: count) else {
            throw SQLError(.other, "a value of \(count) bytes is longer than SQLite takes (\(CInt.max) bytes)")
        }
        return length
    }

    /// Column `index` of the statement's current row, read as a field's value.
    ///
    /// - Throws: ``RelataError`` naming the field when the stored value does not fit it
    ///   (a database changed by something else than Relata).
    static func value(_ statement: SQLiteStatement, _ index: CInt, for field: FieldDefinition) throws -> Value {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_NULL: return .null
        case SQLITE_INTEGER:
            let integer = sqlite3_column_int64(statement, index)
            return field.type.storage == .boolean ? try field.coerced(.boolean(integer != 0)) : try field.coerced(.integer(integer))
        case SQLITE_FLOAT: return try field.coerced(.double(sqlite3_column_double(statement, index)))
        case SQLITE_TEXT:
            let text = self.text(statement, index)
            return field.type.storage == .string ? .string(text) : try field.parsed(text)
        default:
            let count = Int(sqlite3_column_bytes(statement, index))
            let data = sqlite3_column_blob(statement, index).map { Data(bytes: $0, count: count) } ?? Data()
            return try field.coerced(.blob(data))
        }
    }

    /// Appends column `index` of the statement's current row to a batch as field `field`
    /// of `fields`: numbers, booleans and text of a field of their own kind straight into
    /// its column, anything else through ``value(_:_:for:)``.
    static func append(_ statement: SQLiteStatement, _ index: CInt, as field: Int, of fields: [FieldDefinition],
                       to builder: inout RowStreamRowsBuilder) throws {
        let type = fields[field].type
        switch (sqlite3_column_type(statement, index), type.storage) {
        case (SQLITE_NULL, _): builder.appendNull(field: field)
        case (SQLITE_INTEGER, .integer) where type.integerRange == nil:
            builder.append(integer: sqlite3_column_int64(statement, index), field: field)
        case (SQLITE_INTEGER, .boolean): builder.append(boolean: sqlite3_column_int64(statement, index) != 0, field: field)
        case (SQLITE_FLOAT, .double) where type != .singleFloat:
            builder.append(double: sqlite3_column_double(statement, index), field: field)
        case (SQLITE_TEXT, .string): builder.append(string: text(statement, index), field: field)
        default: builder.append(try value(statement, index, for: fields[field]), field: field)
        }
    }

    /// A text column's value: all of its bytes (`sqlite3_column_bytes`), not up to a NUL.
    private static func text(_ statement: SQLiteStatement, _ index: CInt) -> String {
        guard let bytes = sqlite3_column_text(statement, index) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, index))), as: UTF8.self)
    }
}

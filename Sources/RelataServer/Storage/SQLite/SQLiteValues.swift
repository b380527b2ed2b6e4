import Foundation
import GRDB
import GRDBSQLite
import Relata

/// Field values to and from SQLite, exactly: decimals and dates as text (never a binary
/// float), GUIDs as text, blobs as blobs, booleans as 0 and 1.
enum SQLiteValues {
    /// The value bound for a parameter.
    static func databaseValue(_ value: Value) -> DatabaseValue {
        switch value {
        case .null: return .null
        case .integer(let integer): return integer.databaseValue
        case .double(let double): return double.databaseValue
        case .boolean(let bool): return (bool ? 1 : 0 as Int64).databaseValue
        case .decimal, .date, .guid, .string: return value.text.databaseValue
        case .blob(let data): return data.databaseValue
        }
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

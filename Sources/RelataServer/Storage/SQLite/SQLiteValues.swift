import Foundation
import GRDB
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

    /// A stored value read back as a field's value.
    ///
    /// - Throws: ``RelataError`` naming the field when the stored value does not fit it
    ///   (a database changed by something else than Relata).
    static func value(_ stored: DatabaseValue, for field: FieldDefinition) throws -> Value {
        switch stored.storage {
        case .null: return .null
        case .int64(let integer):
            return field.type.storage == .boolean ? try field.coerced(.boolean(integer != 0)) : try field.coerced(.integer(integer))
        case .double(let double): return try field.coerced(.double(double))
        case .string(let text):
            return field.type.storage == .string ? .string(text) : try field.parsed(text)
        case .blob(let data): return try field.coerced(.blob(data))
        }
    }
}

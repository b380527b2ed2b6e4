import Relata

/// What differs between SQL databases, in one place: quoting, parameters, column
/// types. The query builder asks its dialect and never spells SQL a database
/// would read differently.
///
/// ```swift
/// let dialect = SQLiteDialect()
/// dialect.quote("Order Details")   // "Order Details" (double-quoted, inner quotes doubled)
/// ```
public protocol SQLDialect: Sendable {
    /// An identifier quoted so that any name — a keyword, spaces, quotes — is taken as a name.
    func quote(_ identifier: String) -> String
    /// The placeholder of the `index`th bound parameter (counting from 1).
    func placeholder(_ index: Int) -> String
    /// The column type of a field.
    func columnType(of field: FieldDefinition) -> String
    /// The column definition of an auto-increment primary key.
    func autoIncrementPrimaryKey(of field: FieldDefinition) -> String
}

/// SQLite: `"name"`, `?` parameters, and SQLite's type affinities; currency and decimal
/// values are stored as exact text, dates as ISO 8601 text with milliseconds.
public struct SQLiteDialect: SQLDialect {
    public init() {}

    public func quote(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    public func placeholder(_ index: Int) -> String { "?" }

    public func columnType(of field: FieldDefinition) -> String {
        switch field.type.storage {
        case .integer, .boolean: return "INTEGER"
        case .double: return "REAL"
        // Exact: a decimal never passes through a binary float.
        case .decimal: return "TEXT"
        case .string, .date, .guid: return "TEXT"
        case .blob: return "BLOB"
        }
    }

    public func autoIncrementPrimaryKey(of field: FieldDefinition) -> String {
        "\(quote(field.name)) INTEGER PRIMARY KEY AUTOINCREMENT"
    }
}

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
    /// The statement that, inside a transaction, leaves foreign-key checks to the commit, so
    /// the order of a unit's statements does not matter (a detail deleted after its order).
    var deferForeignKeys: String { get }
    /// A condition true when a column holds a value, NULL matching NULL.
    func nullSafeEqual(_ column: String, _ placeholder: String) -> String
    /// What follows a foreign key's definition (deferrable, where the database asks for it).
    var foreignKeySuffix: String { get }
    /// A statement to run after seeding a table with keys given, so new rows get keys after them
    /// (`table`: quoted for SQL; `column`: the auto-increment column's stored name); nil when not needed.
    func afterSeeding(table: String, autoIncrementColumn column: String) -> String?
    /// A query answering a table's columns as rows of (name, declared type, 1 when NOT NULL);
    /// `table` is the stored name, unquoted.
    func columnsQuery(of table: String) -> (sql: String, arguments: [Value])
    /// Whether a column declared `declared` stores a field's values as Relata reads them.
    func storesValues(of field: FieldDefinition, inColumnDeclared declared: String) -> Bool
}

extension SQLDialect {
    /// Standard SQL: double quotes, inner ones doubled (SQLite and PostgreSQL alike).
    public func quote(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

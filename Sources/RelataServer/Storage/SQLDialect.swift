import Relata

/// What differs between SQL databases, in one place: quoting, parameters, column
/// types. The query builder asks its dialect and never spells SQL a database
/// would read differently.
///
/// ```swift
/// let dialect = SQLiteDialect()
/// dialect.quote("Order Details")   // "Order Details" (double-quoted, inner quotes doubled)
/// ```
/// How a database whose tables cannot be altered in place has them rebuilt: foreign keys
/// are not enforced while the old table is dropped and the new one renamed, and are checked
/// before the commit.
///
/// ```swift
/// if let rebuild = dialect.tableRebuild { try connection.execute(rebuild.foreignKeysOff, []) }
/// ```
public struct TableRebuild: Sendable {
    /// Run before the transaction begins, and after it ends.
    public let foreignKeysOff: String, foreignKeysOn: String
    /// A query answering a row for each row whose foreign key points nowhere.
    public let foreignKeyCheck: String
}

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
    /// A query answering the names of the database's tables (in the current schema), as rows of (name).
    var tablesQuery: String { get }
    /// A query answering a table's primary key columns, in key order, as rows of (name).
    func primaryKeyQuery(of table: String) -> (sql: String, arguments: [Value])
    /// A query answering a table's single-column foreign keys as rows of (column, referenced
    /// table, referenced column), all stored names.
    func foreignKeysQuery(of table: String) -> (sql: String, arguments: [Value])
    /// For a database that cannot add a foreign key or `NOT NULL` to an existing table (SQLite),
    /// how a migration builds the table anew and copies its rows; nil where `ALTER TABLE` can.
    var tableRebuild: TableRebuild? { get }
    /// A statement that makes a transaction wait for every other change of the schema's tables
    /// (a migration, another server's start), where `BEGIN` does not already.
    var schemaChangeLock: String? { get }
}

extension SQLDialect {
    /// Standard SQL: double quotes, inner ones doubled (SQLite and PostgreSQL alike).
    public func quote(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

import Relata

/// SQLite: `"name"`, numbered `?1` parameters (one value may stand in several places), and SQLite's type affinities; currency and decimal
/// values are stored as exact text, dates as ISO 8601 text with milliseconds.
public struct SQLiteDialect: SQLDialect {
    public init() {}

    public func placeholder(_ index: Int) -> String { "?\(index)" }

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

    public var deferForeignKeys: String { "PRAGMA defer_foreign_keys = ON" }

    public func nullSafeEqual(_ column: String, _ placeholder: String) -> String { "\(column) IS \(placeholder)" }

    public var foreignKeySuffix: String { "" }

    /// AUTOINCREMENT follows the largest key stored by itself.
    public func afterSeeding(table: String, autoIncrementColumn column: String) -> String? { nil }

    public func columnsQuery(of table: String) -> (sql: String, arguments: [Value]) {
        ("SELECT name, type, \"notnull\" FROM pragma_table_info(?1)", [.string(table)])
    }

    public var tablesQuery: String { "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'" }

    public func primaryKeyQuery(of table: String) -> (sql: String, arguments: [Value]) {
        ("SELECT name FROM pragma_table_info(?1) WHERE pk > 0 ORDER BY pk", [.string(table)])
    }

    public func foreignKeysQuery(of table: String) -> (sql: String, arguments: [Value]) {
        ("SELECT \"from\", \"table\", COALESCE(\"to\", '') FROM pragma_foreign_key_list(?1)", [.string(table)])
    }

    public var tableRebuild: TableRebuild? {
        TableRebuild(foreignKeysOff: "PRAGMA foreign_keys = OFF", foreignKeysOn: "PRAGMA foreign_keys = ON", foreignKeyCheck: "PRAGMA foreign_key_check")
    }

    /// `BEGIN IMMEDIATE` takes the one write lock already.
    public var schemaChangeLock: String? { nil }

    /// By SQLite's type affinity, found from the declared type as SQLite finds it.
    public func storesValues(of field: FieldDefinition, inColumnDeclared declared: String) -> Bool {
        Self.affinity(declared) == Self.affinity(columnType(of: field))
    }

    private static func affinity(_ declared: String) -> String {
        let type = declared.uppercased()
        if type.contains("INT") { return "INTEGER" }
        if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") { return "TEXT" }
        if type.isEmpty || type.contains("BLOB") { return "BLOB" }
        if type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB") { return "REAL" }
        return "NUMERIC"
    }

    public func autoIncrementPrimaryKey(of field: FieldDefinition) -> String {
        "\(quote(field.name)) INTEGER PRIMARY KEY AUTOINCREMENT"
    }
}

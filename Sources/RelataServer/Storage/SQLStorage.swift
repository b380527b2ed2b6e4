import Foundation
import Relata

/// A schema's tables in a SQL database: created from the ``SchemaDefinition``, seeded once
/// from data, read into ``DataTable``s and written by a ``SQLDeltaStore``. The SQL is built
/// here, once, with the database's ``SQLDialect``; the database only runs it.
///
/// ```swift
/// let storage = try SQLStorage(path: "pctrade.sqlite", schema: schema)   // SQLite
/// try storage.seedIfEmpty(with: tablesFromDataFiles)
/// let clients = try storage.read { connection in try storage.loadTable("Clients", in: connection) }
/// ```
public final class SQLStorage: Sendable {
    /// The schema the tables follow.
    public let schema: SchemaDefinition
    /// How SQL is spelled for the database.
    public let dialect: any SQLDialect
    let database: any SQLDatabase

    /// Keeps a schema's tables in a database, creating those that are missing.
    ///
    /// - Throws: ``RelataError/Code/invalidSchema`` naming each column the database lacks or
    ///   holds differently (``SchemaCheck``): requests would fail on them later.
    public convenience init(database: any SQLDatabase, schema: SchemaDefinition) throws {
        self.init(unchecked: database, schema: schema)
        // A start that is refused leaves the database as it found it: the tables it created go too.
        try database.inTransaction { connection in
            // After a migration running now, never halfway through it.
            if let lock = dialect.schemaChangeLock { try connection.execute(lock, []) }
            // The first start makes the tables; later, a table added to the schema is relata migrate's
            // to make — a table whose stored name changed is not silently replaced by an empty one.
            let check = SchemaCheck(storage: self)
            if try schema.tables.allSatisfy({ try check.isMissing($0, in: connection) }) {
                for table in schema.dependencyOrder { try connection.execute(createStatement(for: table), []) }
            }
            try connection.execute(ApplyLog.createStatement(dialect: database.dialect), [])
            let differences = try check.differences(in: connection)
            guard differences.isEmpty else {
                throw RelataError(.invalidSchema, "the database does not match the schema \(schema.name) (\(differences.count) difference\(differences.count == 1 ? "" : "s")):\n  "
                                  + differences.joined(separator: "\n  ") + "\n  (relata migrate SCHEMA --database DATABASE --dry-run shows what it would change)")
            }
        }
    }

    /// The schema's tables in a database as it is: nothing created, nothing checked (a migration's view).
    init(unchecked database: any SQLDatabase, schema: SchemaDefinition) {
        self.schema = schema
        self.database = database
        dialect = database.dialect
        names = PhysicalNames(schema, dialect: database.dialect)
    }

    /// Keeps a schema's tables in a SQLite database file (created when missing).
    ///
    /// - Parameter path: a file path, or `:memory:` for a private in-memory database.
    public convenience init(path: String, schema: SchemaDefinition) throws {
        try self.init(database: SQLiteDatabase(path: path), schema: schema)
    }

    /// A table's name in the database, quoted for SQL (a schema may rename its tables).
    func sqlTable(_ name: String) -> String {
        names.tables[name.lowercased()]?.sql ?? dialect.quote(name)
    }

    /// A field's column in the database, unquoted (a schema may rename its columns).
    func storedColumn(_ field: String, of table: String) -> String {
        names.tables[table.lowercased()]?.columns[field.lowercased()]?.stored ?? field
    }

    /// A field's column in the database, quoted for SQL.
    func sqlColumn(_ field: String, of table: String) -> String {
        names.tables[table.lowercased()]?.columns[field.lowercased()]?.sql ?? dialect.quote(field)
    }

    /// The schema's tables and fields by lowercased name, with their physical names: every
    /// statement looks names up, so they are found by hashing, not by a scan of the schema.
    private struct PhysicalNames: Sendable {
        struct Table: Sendable {
            let definition: Relata.TableDefinition
            let sql: String
            let columns: [String: (stored: String, sql: String)]
        }
        let tables: [String: Table]

        init(_ schema: SchemaDefinition, dialect: any SQLDialect) {
            var tables: [String: Table] = [:]
            for table in schema.tables where tables[table.name.lowercased()] == nil {
                var columns: [String: (stored: String, sql: String)] = [:]
                for field in table.fields where columns[field.name.lowercased()] == nil {
                    let stored = table.column(of: field.name)
                    columns[field.name.lowercased()] = (stored, dialect.quote(stored))
                }
                tables[table.name.lowercased()] = Table(definition: table, sql: dialect.quote(table.physicalName), columns: columns)
            }
            self.tables = tables
        }
    }
    private let names: PhysicalNames

    /// `CREATE TABLE IF NOT EXISTS` for a table: its columns, primary key, required fields
    /// and foreign keys — under another name (quoted) for a migration that rebuilds it.
    func createStatement(for table: Relata.TableDefinition, as sqlName: String? = nil) -> String {
        let keys = table.fields.filter(\.primaryKey)
        var columns: [String] = table.fields.map { field in
            var column = field
            column.name = table.column(of: field.name)
            if keys.count == 1, field.primaryKey, field.autoIncrement { return dialect.autoIncrementPrimaryKey(of: column) }
            return "\(dialect.quote(column.name)) \(dialect.columnType(of: field))\(field.required || field.primaryKey ? " NOT NULL" : "")"
        }
        if !keys.isEmpty, !(keys.count == 1 && keys[0].autoIncrement) {
            columns.append("PRIMARY KEY (\(keys.map { sqlColumn($0.name, of: table.name) }.joined(separator: ", ")))")
        }
        for key in table.foreignKeys {
            columns.append("FOREIGN KEY (\(sqlColumn(key.field, of: table.name))) REFERENCES \(sqlTable(key.references)) (\(sqlColumn(key.referencedField, of: key.references)))\(dialect.foreignKeySuffix)")
        }
        return "CREATE TABLE IF NOT EXISTS \(sqlName ?? sqlTable(table.name)) (\(columns.joined(separator: ", ")))"
    }

    /// True when no table holds a row.
    public func isEmpty() throws -> Bool {
        try database.read { connection in
            try schema.tables.allSatisfy { table in
                try connection.value("SELECT COUNT(*) FROM \(sqlTable(table.name))", [], reading: Self.count) == .integer(0)
            }
        }
    }

    /// How a `COUNT(*)` column is read.
    static let count = FieldDefinition("count", .integer)

    /// Stores the rows of `tables` (their current values) when the database is empty, masters
    /// before details, in one transaction; does nothing otherwise. Returns whether it seeded.
    @discardableResult
    public func seedIfEmpty(with tables: [DataTable]) throws -> Bool {
        guard try isEmpty() else { return false }
        try database.inTransaction { connection in
            for definition in schema.dependencyOrder {
                guard let table = tables.first(where: { $0.name.equalsIgnoringCase(definition.name) }) else { continue }
                let names = table.fields.map(\.name)
                let head = "INSERT INTO \(sqlTable(table.name)) (\(names.map { sqlColumn($0, of: table.name) }.joined(separator: ", "))) VALUES "
                // Many rows a statement (a round trip each on PostgreSQL), within both databases' parameter limits.
                let rowsPerStatement = max(1, min(500, 30_000 / max(1, names.count)))
                let rows = table.rows
                for start in stride(from: 0, to: rows.count, by: rowsPerStatement) {
                    let chunk = rows[start..<min(start + rowsPerStatement, rows.count)]
                    let tuples = chunk.indices.map { index in
                        "(" + names.indices.map { dialect.placeholder((index - start) * names.count + $0 + 1) }.joined(separator: ", ") + ")"
                    }
                    try connection.execute(head + tuples.joined(separator: ", "), chunk.flatMap { row in names.map { row[$0] } })
                }
                if let auto = table.fields.first(where: \.autoIncrement),
                   let statement = dialect.afterSeeding(table: sqlTable(table.name), autoIncrementColumn: storedColumn(auto.name, of: table.name)) {
                    _ = try connection.value(statement, [], reading: Self.count)
                }
            }
        }
        return true
    }

    /// Runs `work` in a read transaction.
    public func read<Result>(_ work: (any SQLConnection) throws -> Result) throws -> Result {
        try database.read(work)
    }

    /// Runs `work` in a read transaction on a reader connection (beside the writer where the
    /// database allows), off the caller's thread: `work` may block.
    func asyncRead<Result: Sendable>(_ work: @escaping @Sendable (any SQLConnection) throws -> Result) async throws -> Result {
        try await database.asyncRead(work)
    }

    /// Runs `work` with a connection and no transaction open: the work opens its own
    /// (a ``SQLDeltaStore`` begins and ends one per unit of work).
    public func write<Result>(_ work: (any SQLConnection) throws -> Result) throws -> Result {
        try database.write(work)
    }

    /// Like ``write(_:)``, but the work's commits may share one durable commit with others
    /// (see ``SQLDatabase/groupedWrite(_:)``): tell nobody of its changes before the returned
    /// ``PendingCommit`` says they are durable.
    public func groupedWrite<Result>(_ work: (any SQLConnection) throws -> Result) throws -> (Result, PendingCommit) {
        try database.groupedWrite(work)
    }

    /// ` ORDER BY` the table's primary key (empty without one): rows come in the same order from
    /// every database, whatever order it keeps them in.
    func orderByKey(of table: String) -> String {
        let keys = names.tables[table.lowercased()]?.definition.fields.filter(\.primaryKey) ?? []
        return keys.isEmpty ? "" : " ORDER BY " + keys.map { sqlColumn($0.name, of: table) }.joined(separator: ", ")
    }

    /// The table definition with a name, or an error naming the published tables.
    public func definition(of name: String) throws -> Relata.TableDefinition {
        guard let table = names.tables[name.lowercased()]?.definition else {
            throw RelataError(.unknownTable, "the schema \(schema.name) has no table '\(name)' (tables: \(schema.tables.map(\.name).joined(separator: ", ")))",
                              table: name)
        }
        return table
    }

    /// An empty ``DataTable`` of a schema table, to load rows into.
    public func emptyTable(_ name: String) throws -> DataTable {
        let definition = try definition(of: name)
        return try DataTable(name: definition.name, fields: definition.fields)
    }

    /// A whole table, read into a ``DataTable`` (rows as stored, unchanged).
    public func loadTable(_ name: String, in connection: any SQLConnection) throws -> DataTable {
        let table = try emptyTable(name)
        try loadRows(into: table, in: connection)
        return table
    }

    /// A table holding the stored rows a SQL condition selects, the table called `alias` in it
    /// (a condition ``SQLQueryCompiler`` wrote, with its arguments).
    func loadTable(_ name: String, where condition: String, alias: String, arguments: [Value], in connection: any SQLConnection) throws -> DataTable {
        let table = try emptyTable(name)
        try table.loadRows(fetchValues(of: table, alias: alias, where: condition, arguments: arguments, in: connection))
        return table
    }

    /// Loads into `table` the stored rows with these primary keys that it does not hold yet,
    /// a few hundred keys per query.
    public func loadRows(withKeys keys: [[Value]], into table: DataTable, in connection: any SQLConnection) throws {
        let keyFields = table.primaryKeyFields
        guard !keyFields.isEmpty else { return }
        var seen = table.heldKeys   // a key with a NULL part is left out: no stored row matches it
        let missing = keys.filter { key in key.count == keyFields.count && seen.insert(key) }
        let columns = keyFields.map { sqlColumn($0.name, of: table.name) }
        var loaded: [[Value]] = []
        let perQuery = max(1, 500 / keyFields.count)
        // `column IN (…)` for a full chunk, made once: every chunk but the last has its size.
        var fullChunkCondition: String?
        for start in stride(from: 0, to: missing.count, by: perQuery) {
            let chunk = missing[start..<min(start + perQuery, missing.count)]
            var arguments: [Value] = []
            let condition: String
            if columns.count == 1 {
                arguments = chunk.map { $0[0] }
                if chunk.count == perQuery, let fullChunkCondition {
                    condition = fullChunkCondition
                } else {
                    let placeholders = (1...chunk.count).map(dialect.placeholder).joined(separator: ", ")
                    condition = "\(columns[0]) IN (\(placeholders))"
                    if chunk.count == perQuery { fullChunkCondition = condition }
                }
            } else {
                condition = chunk.map { key in
                    "(" + zip(columns, key).map { column, value in
                        arguments.append(value)
                        return "\(column) = \(dialect.placeholder(arguments.count))"
                    }.joined(separator: " AND ") + ")"
                }.joined(separator: " OR ")
            }
            loaded += try fetchValues(of: table, where: condition, arguments: arguments, in: connection)
        }
        try table.loadRows(loaded)
    }

    /// Loads into `table` the stored rows whose `field` holds one of `values`, but for those it
    /// holds already (deleted ones included): the child rows a foreign-key check needs, the lookup
    /// rows a filter needs. Returns the values of the rows it added.
    @discardableResult
    public func loadRows(where field: String, isIn values: [Value], into table: DataTable, in connection: any SQLConnection) throws -> [[Value]] {
        let distinct = Array(Set(values.filter { !$0.isNull }))
        guard !distinct.isEmpty else { return [] }
        let column = sqlColumn(field, of: table.name)
        var loaded: [[Value]] = []
        for start in stride(from: 0, to: distinct.count, by: 500) {
            var arguments: [Value] = []
            let placeholders = distinct[start..<min(start + 500, distinct.count)].map { value in
                arguments.append(value)
                return dialect.placeholder(arguments.count)
            }
            loaded += try fetchValues(of: table, where: "\(column) IN (\(placeholders.joined(separator: ", ")))", arguments: arguments, in: connection)
        }
        let keyIndexes = table.fields.indices.filter { table.fields[$0].primaryKey }
        let held = table.heldKeys
        let added = loaded.filter { row in !held.contains(keyIndexes.map { row[$0] }) }
        try table.loadRows(added)
        return added
    }

    /// Loads into `table` every stored row it does not hold yet (by primary key).
    public func loadMissingRows(into table: DataTable, in connection: any SQLConnection) throws {
        try loadRows(into: table, in: connection, skippingHeldKeys: true)
    }

    /// Loads every stored row into `table`.
    private func loadRows(into table: DataTable, in connection: any SQLConnection, skippingHeldKeys: Bool = false) throws {
        let keyIndexes = table.fields.indices.filter { table.fields[$0].primaryKey }
        var loaded = try fetchValues(of: table, where: nil, arguments: [], in: connection)
        if skippingHeldKeys, !keyIndexes.isEmpty {
            let held = table.heldKeys
            loaded = loaded.filter { values in !held.contains(keyIndexes.map { values[$0] }) }
        }
        try table.loadRows(loaded)
    }

    /// The stored rows a condition selects (all without one), as values of the table's fields;
    /// `alias` is what the condition calls the table, if anything.
    private func fetchValues(of table: DataTable, alias: String? = nil, where condition: String?, arguments: [Value],
                             in connection: any SQLConnection) throws -> [[Value]] {
        let columns = table.fields.map { sqlColumn($0.name, of: table.name) }.joined(separator: ", ")
        let sql = "SELECT \(columns) FROM \(sqlTable(table.name))" + (alias.map { " AS \($0)" } ?? "")
            + (condition.map { " WHERE \($0)" } ?? "") + orderByKey(of: table.name)
        do {
            return try connection.rows(sql, arguments, reading: table.fields)
        } catch var error as RelataError {
            error.table = table.name
            throw error
        }
    }
}

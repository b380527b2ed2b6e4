import Foundation
import GRDB
import Relata

/// A schema's tables in a SQLite database (through GRDB): created from the
/// ``SchemaDefinition``, seeded once from data, read into ``DataTable``s and
/// written by a ``SQLDeltaStore``.
///
/// ```swift
/// let storage = try SQLiteStorage(path: "pctrade.sqlite", schema: schema)
/// try storage.seedIfEmpty(with: tablesFromDataFiles)
/// let clients = try storage.read { db in try storage.loadTable("Clients", in: db) }
/// ```
public final class SQLiteStorage: Sendable {
    /// The schema the tables follow.
    public let schema: SchemaDefinition
    /// How SQL is spelled for SQLite.
    public let dialect = SQLiteDialect()
    /// A pool (WAL: reads run beside the writer, so a long read never holds up an apply) for a
    /// file; a queue for a private in-memory database.
    private let queue: any DatabaseWriter

    /// Opens (or creates) the database file and creates the schema's tables that are missing.
    ///
    /// - Parameter path: a file path, or `:memory:` for a private in-memory database.
    public init(path: String, schema: SchemaDefinition) throws {
        self.schema = schema
        names = PhysicalNames(schema, dialect: dialect)
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        // Schemas of one domain share a database file: wait for each other's writes instead of failing.
        configuration.busyMode = .timeout(10)
        queue = path == ":memory:" ? try DatabaseQueue(configuration: configuration)
                                   : try DatabasePool(path: path, configuration: configuration)
        try queue.write { db in
            for table in schema.tables { try db.execute(sql: createStatement(for: table)) }
        }
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

        init(_ schema: SchemaDefinition, dialect: SQLiteDialect) {
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
    /// and foreign keys.
    func createStatement(for table: Relata.TableDefinition) -> String {
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
            columns.append("FOREIGN KEY (\(sqlColumn(key.field, of: table.name))) REFERENCES \(sqlTable(key.references)) (\(sqlColumn(key.referencedField, of: key.references)))")
        }
        return "CREATE TABLE IF NOT EXISTS \(sqlTable(table.name)) (\(columns.joined(separator: ", ")))"
    }

    /// True when no table holds a row.
    public func isEmpty() throws -> Bool {
        try queue.read { db in
            try schema.tables.allSatisfy { table in
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(sqlTable(table.name))") == 0
            }
        }
    }

    /// Stores the rows of `tables` (their current values) when the database is empty, in update
    /// order, in one transaction; does nothing otherwise. Returns whether it seeded.
    @discardableResult
    public func seedIfEmpty(with tables: [DataTable]) throws -> Bool {
        guard try isEmpty() else { return false }
        try queue.write { db in
            for name in schema.updateOrder {
                guard let table = tables.first(where: { $0.name.caseInsensitiveCompare(name) == .orderedSame }) else { continue }
                let names = table.fields.map(\.name)
                let sql = "INSERT INTO \(sqlTable(table.name)) (\(names.map { sqlColumn($0, of: table.name) }.joined(separator: ", "))) VALUES (\(names.indices.map { dialect.placeholder($0 + 1) }.joined(separator: ", ")))"
                let statement = try db.makeStatement(sql: sql)
                for row in table.rows {
                    try statement.execute(arguments: StatementArguments(names.map { SQLiteValues.databaseValue(row[$0]) }))
                }
            }
        }
        return true
    }

    /// Runs `work` in a read transaction.
    public func read<Result>(_ work: (Database) throws -> Result) throws -> Result {
        try queue.read(work)
    }

    /// Runs `work` in a read transaction on a reader connection (beside the writer, for a
    /// database file), off the caller's thread: `work` may block.
    func asyncRead<Result: Sendable>(_ work: @escaping @Sendable (Database) throws -> Result) async throws -> Result {
        try await queue.read(work)
    }

    /// Runs `work` with the database and no transaction open: the work opens its own
    /// (a ``SQLDeltaStore`` begins and ends one per unit of work).
    public func write<Result>(_ work: (Database) throws -> Result) throws -> Result {
        try queue.writeWithoutTransaction(work)
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
    public func loadTable(_ name: String, in db: Database) throws -> DataTable {
        let table = try emptyTable(name)
        try loadRows(into: table, in: db)
        return table
    }

    /// Loads into `table` the stored rows with these primary keys that it does not hold yet,
    /// a few hundred keys per query.
    public func loadRows(withKeys keys: [[Value]], into table: DataTable, in db: Database) throws {
        let keyFields = table.primaryKeyFields
        guard !keyFields.isEmpty else { return }
        var seen = table.heldKeys
        let missing = keys.filter { key in key.count == keyFields.count && seen.insert(key).inserted }
        let columns = keyFields.map { sqlColumn($0.name, of: table.name) }
        var loaded: [[Value]] = []
        let perQuery = max(1, 500 / keyFields.count)
        for start in stride(from: 0, to: missing.count, by: perQuery) {
            let chunk = missing[start..<min(start + perQuery, missing.count)]
            var arguments: [DatabaseValue] = []
            let condition: String
            if columns.count == 1 {
                let placeholders = chunk.map { key in
                    arguments.append(SQLiteValues.databaseValue(key[0]))
                    return dialect.placeholder(arguments.count)
                }
                condition = "\(columns[0]) IN (\(placeholders.joined(separator: ", ")))"
            } else {
                condition = chunk.map { key in
                    "(" + zip(columns, key).map { column, value in
                        arguments.append(SQLiteValues.databaseValue(value))
                        return "\(column) = \(dialect.placeholder(arguments.count))"
                    }.joined(separator: " AND ") + ")"
                }.joined(separator: " OR ")
            }
            loaded += try fetchValues(of: table, where: condition, arguments: arguments, in: db)
        }
        try table.loadRows(loaded)
    }

    /// Loads into `table` the stored rows whose `field` holds one of `values`, but for those it
    /// holds already (deleted ones included): the child rows a foreign-key check needs.
    public func loadRows(where field: String, isIn values: [Value], into table: DataTable, in db: Database) throws {
        let distinct = Array(Set(values.filter { !$0.isNull }))
        guard !distinct.isEmpty else { return }
        let column = sqlColumn(field, of: table.name)
        var loaded: [[Value]] = []
        for start in stride(from: 0, to: distinct.count, by: 500) {
            var arguments: [DatabaseValue] = []
            let placeholders = distinct[start..<min(start + 500, distinct.count)].map { value in
                arguments.append(SQLiteValues.databaseValue(value))
                return dialect.placeholder(arguments.count)
            }
            loaded += try fetchValues(of: table, where: "\(column) IN (\(placeholders.joined(separator: ", ")))", arguments: arguments, in: db)
        }
        let keyIndexes = table.fields.indices.filter { table.fields[$0].primaryKey }
        let held = table.heldKeys
        try table.loadRows(loaded.filter { row in !held.contains(keyIndexes.map { row[$0] }) })
    }

    /// Loads into `table` every stored row it does not hold yet (by primary key).
    public func loadMissingRows(into table: DataTable, in db: Database) throws {
        try loadRows(into: table, in: db, skippingHeldKeys: true)
    }

    /// Loads every stored row into `table`.
    private func loadRows(into table: DataTable, in db: Database, skippingHeldKeys: Bool = false) throws {
        let keyIndexes = table.fields.indices.filter { table.fields[$0].primaryKey }
        var loaded = try fetchValues(of: table, where: nil, arguments: [], in: db)
        if skippingHeldKeys, !keyIndexes.isEmpty, table.rowCount > 0 {
            loaded = try loaded.filter { values in try table.row(forPrimaryKey: keyIndexes.map { values[$0] }) == nil }
        }
        try table.loadRows(loaded)
    }

    /// The stored rows a condition selects (all without one), as values of the table's fields.
    private func fetchValues(of table: DataTable, where condition: String?, arguments: [DatabaseValue], in db: Database) throws -> [[Value]] {
        let fields = table.fields
        let columns = fields.map { sqlColumn($0.name, of: table.name) }.joined(separator: ", ")
        let sql = "SELECT \(columns) FROM \(sqlTable(table.name))" + (condition.map { " WHERE \($0)" } ?? "")
        var loaded: [[Value]] = []
        let rows = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: StatementArguments(arguments))
        while let row = try rows.next() {
            loaded.append(try fields.indices.map { index in
                do {
                    return try SQLiteValues.value(row[index], for: fields[index])
                } catch var error as RelataError {
                    error.table = table.name
                    throw error
                }
            })
        }
        return loaded
    }
}

import Relata
import RelataScript

/// `lda` on the server: the rows rules read are loaded from the database into the unit
/// of work's tables on demand, and their writes change those tables (running the
/// target table's rules) and join the apply, as on every site.
///
/// Lives for one unit of work, inside its database access.
final class SQLDataAccess: RuleDataAccess {
    let storage: SQLStorage
    /// The schema version the unit of work runs on (its lookup and calculated fields).
    let schema: SchemaDefinition
    let connection: any SQLConnection
    /// The runtime of the unit's rules and calculated fields; nil for a read that needs neither
    /// (its tables get their lookup fields only).
    let runtime: RuleRuntime?
    /// The unit of work's tables: rows as stored, then the changes made to them.
    let tables = TableDataAccess()
    private var fullyLoaded: Set<String> = []
    /// Checks each table `lda` reads by name, for reads done as the caller (a calculated field in a
    /// where expression); nil — rules in an apply or a command — reads with the server's authority.
    var readCheck: ((String) throws -> Void)?

    init(storage: SQLStorage, schema: SchemaDefinition, connection: any SQLConnection, runtime: RuleRuntime?) {
        self.storage = storage
        self.schema = schema
        self.connection = connection
        self.runtime = runtime
    }

    /// The unit's table with a name, made (with its rules, calculated and lookup fields) on first use.
    func table(_ name: String) throws -> DataTable {
        if let table = tables.table(named: name) { return table }
        let stored = try storage.definition(of: name)
        let definition = schema.table(named: stored.name) ?? stored
        let table = try storage.emptyTable(definition.name)
        tables.add(table)
        for lookup in definition.lookupFields {
            let source = try self.table(lookup.lookupTable)
            try loadAll(source)
            try table.addLookupField(name: lookup.name, sourceField: lookup.sourceField, lookupTable: source,
                                     lookupKeyField: lookup.lookupKeyField, lookupResultField: lookup.lookupResultField)
        }
        guard let runtime else { return table }
        for field in definition.calculatedFields {
            try runtime.addCalculatedField(name: field.name, type: field.type, cached: field.cached ?? false, to: table, function: field.function)
        }
        runtime.attachRules(to: [table])
        return table
    }

    /// Loads every stored row of a table the unit does not hold yet.
    func loadAll(_ table: DataTable) throws {
        guard fullyLoaded.insert(table.name.lowercased()).inserted else { return }
        try storage.loadMissingRows(into: table, in: connection)
    }

    var tableNames: [String] { storage.schema.tables.map(\.name) }

    func fields(ofTable name: String) -> [FieldDefinition]? { storage.schema.table(named: name)?.fields }

    func row(in name: String, key: [Value]) throws -> DataTableRow? {
        try readCheck?(try storage.definition(of: name).name)
        let table = try table(name)
        if let row = try table.row(forPrimaryKey: key) { return row }
        try storage.loadRows(withKeys: [key], into: table, in: connection)
        return try table.row(forPrimaryKey: key)
    }

    func rows(in name: String, where expression: String, parameters: [String: Value]) throws -> [DataTableRow] {
        try readCheck?(try storage.definition(of: name).name)
        let table = try table(name)
        try loadAll(table)
        return try table.rows(where: expression, parameters: parameters)
    }

    /// The unit's tables, each loaded whole, hold the database's rows and the unit's changes:
    /// the query answers as it would offline over the same rows.
    func answer(sql: String, parameters: [String: Value]) throws -> DataTable {
        let query = try DASQLQuery(sql)
        for name in query.tableNames { try readCheck?(try storage.definition(of: name).name) }
        let tables = try query.tableNames.map { name in
            let table = try table(name)
            try loadAll(table)
            return table
        }
        return try DataTable(query: query, parameters: parameters, over: tables)
    }

    func insert(into name: String, values: [String: Value]) throws -> DataTableRow {
        _ = try table(name)
        return try tables.insert(into: name, values: values)
    }

    func update(_ row: DataTableRow, values: [String: Value]) throws {
        try tables.update(row, values: values)
    }

    func remove(_ row: DataTableRow) throws {
        try tables.remove(row)
    }
}

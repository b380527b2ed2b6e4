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
    /// Lookup tables are loaded whole when a table that uses them is made (a rule may read any
    /// row's lookup), unless this is set: a filter over a stream of stored rows then loads only
    /// the lookup rows each chunk points to (``loadLookupRows(of:pointedToBy:)``) into the unit's
    /// tables, never into the table of its own the rows are filtered through.
    var lookupsLoadOnDemand = false
    /// The lookup keys asked for so far, by `table/key field` (each is fetched once).
    private var requestedLookupKeys: [String: Set<Value>] = [:]

    init(storage: SQLStorage, schema: SchemaDefinition, connection: any SQLConnection, runtime: RuleRuntime?) {
        self.storage = storage
        self.schema = schema
        self.connection = connection
        self.runtime = runtime
    }

    /// The unit's table with a name, made (with its rules, calculated and lookup fields) on first use.
    func table(_ name: String) throws -> DataTable {
        if let table = tables.table(named: name) { return table }
        return try makeTable(name, joiningTheUnit: true)
    }

    /// A table like ``table(_:)``'s that stays outside the unit: rows filtered through it are not
    /// the rows `lda` and lookups read (a calculated field reading its own table through `lda`, or
    /// a table looking up its own rows, reads the unit's table instead).
    func tableOfItsOwn(_ name: String) throws -> DataTable {
        try makeTable(name, joiningTheUnit: false)
    }

    private func makeTable(_ name: String, joiningTheUnit: Bool) throws -> DataTable {
        let stored = try storage.definition(of: name)
        let definition = schema.table(named: stored.name) ?? stored
        let table = try storage.emptyTable(definition.name)
        if joiningTheUnit { tables.add(table) }
        for lookup in definition.lookupFields {
            let source = try self.table(lookup.lookupTable)
            if !lookupsLoadOnDemand { try loadAll(source) }
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
        // Rows read whole may point anywhere in their lookup tables.
        if lookupsLoadOnDemand {
            for lookup in schema.table(named: table.name)?.lookupFields ?? [] { try loadAll(self.table(lookup.lookupTable)) }
        }
    }

    /// Loads the rows of the lookup tables that `rows` (values of `table`'s fields, in order) point
    /// to, and those the loaded rows point to in turn — only the rows not asked for already.
    func loadLookupRows(of table: DataTable, pointedToBy rows: [[Value]]) throws {
        guard lookupsLoadOnDemand, !rows.isEmpty else { return }
        for lookup in schema.table(named: table.name)?.lookupFields ?? [] {
            let source = try self.table(lookup.lookupTable)
            guard !fullyLoaded.contains(source.name.lowercased()),
                  let position = table.fields.firstIndex(where: { $0.name.equalsIgnoringCase(lookup.sourceField) }),
                  let keyField = source.field(named: lookup.lookupKeyField) else { continue }
            let requested = "\(source.name.lowercased())/\(keyField.name.lowercased())"
            var wanted: [Value] = []
            for row in rows where position < row.count {
                // A value that is not of the key's type matches no stored key.
                guard let key = try? keyField.coerced(row[position]), !key.isNull,
                      requestedLookupKeys[requested, default: []].insert(key).inserted else { continue }
                wanted.append(key)
            }
            let loaded = try storage.loadRows(where: keyField.name, isIn: wanted, into: source, in: connection)
            try loadLookupRows(of: source, pointedToBy: loaded)
        }
    }

    var tableNames: [String] { storage.schema.tables.map(\.name) }

    func fields(ofTable name: String) -> [FieldDefinition]? { storage.schema.table(named: name)?.fields }

    func row(in name: String, key: [Value]) throws -> DataTableRow? {
        try readCheck?(try storage.definition(of: name).name)
        let table = try table(name)
        if let row = try table.row(forPrimaryKey: key) { return row }
        try storage.loadRows(withKeys: [key], into: table, in: connection)
        let row = try table.row(forPrimaryKey: key)
        if let row { try loadLookupRows(of: table, pointedToBy: [table.fields.map { row[$0.name] }]) }
        return row
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

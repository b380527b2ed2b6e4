import Logging
import Relata
import RelataScript

/// The server's schema and rule scripts as downloaded, running over the adapter's tables:
/// a ``LocalDataAdapter`` with `isServer` false — the same rule runtime as offline and on
/// the server.
final class LoadedRules {
    private(set) var schema: SchemaDefinition
    private(set) var version: String
    let adapter: LocalDataAdapter
    /// The tables fetched at least once (the others are empty until fetched).
    var fetched: Set<String> = []
    /// The last request that filled each table (lower-case name), for a refresh.
    var lastRequests: [String: DataRequest] = [:]
    /// Tables (lower-case names) whose pending changes the old row rules checked: the scripts changed since.
    var tablesToRevalidate: Set<String> = []
    /// The operations the session may make, by lowercased table name, as the server last said
    /// (GetSchema); nil when it did not (a briefcase's rules): the server decides then.
    var allowedOperations: [String: Set<String>]?
    /// For each operation the session may not make, the roles that may, by lowercased table name.
    var rolesAllowed: [String: [String: [String]]] = [:]

    /// - Parameter tables: tables holding the schema's data already (from a briefcase), pending changes included.
    init(schema: SchemaDefinition, version: String, tables: [DataTable] = [], logger: Logger) throws {
        self.schema = schema
        self.version = version
        adapter = try LocalDataAdapter(schema: schema, tables: tables, logger: logger)
        // The server replays the user's edits, not the values the rules here made of them.
        for table in adapter.tables { table.recordsEdits = true }
    }

    /// Takes the server's new rules: every table's script and the schema-wide one (a script the
    /// server dropped is dropped here too), update rules and update order. Tables whose shape
    /// changed — stored, calculated or lookup fields, foreign keys, a table added or gone —
    /// cannot be kept: that needs a new adapter, and the error says so rather than going on
    /// with the old definitions.
    func update(to newSchema: SchemaDefinition, version newVersion: String) throws {
        guard newVersion != version else { return }
        for definition in newSchema.tables {
            guard let old = schema.table(named: definition.name), Self.shape(of: old) == Self.shape(of: definition) else {
                throw Self.schemaChanged(definition.name)
            }
        }
        if let gone = schema.tables.first(where: { newSchema.table(named: $0.name) == nil }) {
            throw Self.schemaChanged(gone.name)
        }
        // A script the server dropped is replaced by an empty one: its handlers must not run on.
        if let script = newSchema.script ?? schema.script.map({ RuleScript("", fileName: $0.fileName) }) {
            try adapter.setSchemaScript(script)
        }
        for definition in newSchema.tables {
            if let script = definition.script ?? schema.table(named: definition.name)?.script.map({ RuleScript("", fileName: $0.fileName) }) {
                try adapter.setScript(script, forTable: definition.name)
            }
            adapter.setUpdateRule(definition.updateRule, forTable: definition.name)
        }
        adapter.updateOrder = newSchema.updateOrder
        schema = newSchema
        version = newVersion
        tablesToRevalidate = Set(adapter.tables.filter(\.hasChanges).map { $0.name.lowercased() })
    }

    /// A table's definition without what may change under a running client (its script and update rule).
    private static func shape(of table: TableDefinition) -> TableDefinition {
        var shape = table
        shape.script = nil
        shape.updateRule = UpdateRule()
        return shape
    }

    private static func schemaChanged(_ table: String) -> RemoteError {
        RemoteError(kind: .permanent, code: RemoteError.schemaChangedCode,
                    message: "the server's table \(table) changed shape (fields, relationships, calculated or lookup fields) or was added or removed; create a new adapter to use it",
                    table: table)
    }
}

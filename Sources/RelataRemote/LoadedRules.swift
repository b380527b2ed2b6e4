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

    /// - Parameter tables: tables holding the schema's data already (from a briefcase), pending changes included.
    init(schema: SchemaDefinition, version: String, tables: [DataTable] = [], logger: Logger) throws {
        self.schema = schema
        self.version = version
        adapter = try LocalDataAdapter(schema: schema, tables: tables, logger: logger)
    }

    /// Takes the server's new scripts: every table's and the schema-wide one. Tables whose
    /// fields changed cannot be kept: that needs a new adapter.
    func update(to newSchema: SchemaDefinition, version newVersion: String) throws {
        guard newVersion != version else { return }
        for definition in newSchema.tables {
            guard let old = schema.table(named: definition.name), old.fields == definition.fields else {
                throw RemoteError(kind: .permanent, code: "schemaChanged",
                                  message: "the server's table \(definition.name) changed shape; create a new adapter to use it",
                                  table: definition.name)
            }
        }
        if let script = newSchema.script { try adapter.setSchemaScript(script) }
        for definition in newSchema.tables {
            if let script = definition.script { try adapter.setScript(script, forTable: definition.name) }
            adapter.setUpdateRule(definition.updateRule, forTable: definition.name)
        }
        adapter.updateOrder = newSchema.updateOrder
        schema = newSchema
        version = newVersion
        tablesToRevalidate = Set(adapter.tables.filter(\.hasChanges).map { $0.name.lowercased() })
    }
}

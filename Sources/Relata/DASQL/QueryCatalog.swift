/// The tables a DA SQL query may read: their schema names and fields. On the server it holds
/// what the caller's roles may read; offline, a `LocalDataAdapter`'s tables.
package struct QueryCatalog: Sendable {
    package struct Table: Sendable {
        package var name: String
        package var fields: [FieldDefinition]

        package init(name: String, fields: [FieldDefinition]) {
            self.name = name
            self.fields = fields
        }

        /// The field with a name, case-insensitively.
        package func field(named name: String) -> FieldDefinition? {
            fields.first { $0.name.equalsIgnoringCase(name) }
        }
    }

    private let tables: [String: Table]
    /// The tables' names, in the order given.
    package let names: [String]

    package init(_ tables: [Table]) {
        self.tables = Dictionary(tables.map { ($0.name.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        names = tables.map(\.name)
    }

    /// Every table of a schema with its stored fields.
    package init(schema: SchemaDefinition) {
        self.init(schema.tables.map { Table(name: $0.name, fields: $0.fields) })
    }

    /// The table with a name, case-insensitively.
    package func table(named name: String) -> Table? {
        tables[name.lowercased()]
    }
}

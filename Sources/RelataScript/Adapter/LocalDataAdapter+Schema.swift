import Logging
import Relata

extension LocalDataAdapter {
    /// An adapter holding a schema's tables with their scripts, relationships, lookup and
    /// calculated fields, update rules and update order.
    ///
    /// ```swift
    /// let adapter = try LocalDataAdapter(schema: definition, tables: [clients, orders])   // tables with their data
    /// ```
    /// - Parameters:
    ///   - tables: tables holding the schema's data, matched by name; a table the schema
    ///     describes and `tables` lacks starts empty. Their fields must be the schema's.
    ///   - coverage: records which handlers and `fail()` calls run (see ``RuleCoverage``).
    public convenience init(schema: SchemaDefinition, tables: [DataTable] = [], engine: ScriptEngine? = nil,
                            logger: Logger = Logger(label: "relata.rules"), coverage: RuleCoverage? = nil) throws {
        try self.init(engine: engine, logger: logger)
        self.coverage = coverage
        try load(schema, tables: tables)
    }

    /// Adds a schema's tables and rules (see ``init(schema:tables:engine:logger:coverage:)``).
    ///
    /// - Throws: ``RelataError`` for a table given twice or with other fields than the schema's,
    ///   or a relationship, lookup or calculated field the tables cannot have; a script's ``ScriptError``.
    public func load(_ schema: SchemaDefinition, tables given: [DataTable]) throws {
        for table in given where schema.table(named: table.name) == nil {
            throw RelataError(.unknownTable, "the schema \(schema.name) describes no table \(table.name)", table: table.name)
        }
        for definition in schema.tables {
            let matching = given.filter { $0.name.equalsIgnoringCase(definition.name) }
            guard matching.count <= 1 else {
                throw RelataError(.invalidDefinition, "the table is given twice", table: definition.name)
            }
            let table = try matching.first ?? DataTable(name: definition.name, fields: definition.fields)
            guard table.fields == definition.fields else {
                throw RelataError(.invalidDefinition, "the table's fields are not the schema's", table: definition.name)
            }
            try addTable(table)
            setUpdateRule(definition.updateRule, forTable: definition.name)
        }
        for definition in schema.tables {
            guard let table = table(named: definition.name) else { continue }
            for key in definition.foreignKeys {
                try table.addForeignKey(key.field, references: try existing(key.references), field: key.referencedField)
            }
            for lookup in definition.lookupFields {
                try table.addLookupField(name: lookup.name, sourceField: lookup.sourceField, lookupTable: try existing(lookup.lookupTable),
                                         lookupKeyField: lookup.lookupKeyField, lookupResultField: lookup.lookupResultField)
            }
        }
        if let script = schema.script { try setSchemaScript(script) }
        if let script = schema.serverScript { try setServerScript(script, forTable: nil) }
        for definition in schema.tables {
            if let script = definition.script { try setScript(script, forTable: definition.name) }
            if let script = definition.serverScript { try setServerScript(script, forTable: definition.name) }
            for field in definition.calculatedFields {
                try addCalculatedField(name: field.name, type: field.type, cached: field.cached ?? false,
                                       table: definition.name, function: field.function)
            }
        }
        updateOrder = schema.updateOrder
    }

    private func existing(_ name: String) throws -> DataTable {
        guard let table = table(named: name) else { throw unknownTable(name) }
        return table
    }
}

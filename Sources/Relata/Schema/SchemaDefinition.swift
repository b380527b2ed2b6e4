import Foundation

/// A schema as every site shares it: tables with their fields and relationships,
/// update rules and order, and the rule scripts as text — no file paths. A data
/// server sends it to clients (with its ``version``), a `LocalDataAdapter` and a
/// server's rule runtimes are built from it.
///
/// ```swift
/// let schema = try SchemaDefinition(name: "Shop", tables: [
///     TableDefinition(name: "Orders", fields: orderFields, script: RuleScript(ordersJS, fileName: "Orders.js")),
/// ])
/// print(schema.version)   // sha256:3f1c…, changes whenever a table, a field or a script does
/// ```
public struct SchemaDefinition: Sendable, Hashable, Codable {
    /// The schema's name (a data server's service name selects it).
    public var name: String
    /// The tables, in the order they were described.
    public var tables: [TableDefinition]
    /// The schema-wide rule script: its handlers run for every table, after the table's own.
    public var script: RuleScript?
    /// The schema-wide script that runs only where the data is kept (a data server, or a
    /// ``LocalDataAdapter`` made from the schema): after ``script``, and never sent to clients
    /// (see ``sharedWithClients``). Commands and `afterLogin` may live here.
    public var serverScript: RuleScript?
    /// Table names in the order an apply processes their changes (masters before details).
    /// Without one given, the tables' ``dependencyOrder``.
    public var updateOrder: [String]
    /// Commands a data server runs on request (`ExecuteCommand`): functions of the schema-wide script.
    public var commands: [CommandDefinition]

    /// Creates a schema and checks it.
    ///
    /// - Parameter updateOrder: defaults to ``dependencyOrder``: masters before their details,
    ///   otherwise the tables' order.
    /// - Throws: ``RelataError/Code/invalidSchema`` when a table is described twice, or
    ///   `updateOrder`, a foreign key or a lookup field names a table the schema does not describe.
    public init(name: String, tables: [TableDefinition], script: RuleScript? = nil, updateOrder: [String]? = nil,
                commands: [CommandDefinition] = [], serverScript: RuleScript? = nil) throws {
        self.name = name
        self.tables = tables
        self.script = script
        self.serverScript = serverScript
        self.updateOrder = updateOrder ?? Self.dependencyOrder(of: tables).map(\.name)
        self.commands = commands
        try check()
    }

    /// The tables with every table a foreign key references before the table: the order a
    /// database creates them in and, unless `updateOrder` says otherwise, the order an apply
    /// inserts in. Tables keep their described order where no key decides; in a cycle of
    /// references, the first described comes first.
    ///
    /// ```swift
    /// // OrderDetails described first, referencing Orders:
    /// schema.dependencyOrder.map(\.name)   // ["Orders", "OrderDetails"]
    /// ```
    public var dependencyOrder: [TableDefinition] {
        Self.dependencyOrder(of: tables)
    }

    private static func dependencyOrder(of tables: [TableDefinition]) -> [TableDefinition] {
        var placed: Set<String> = []
        var remaining = tables
        var ordered: [TableDefinition] = []
        while !remaining.isEmpty {
            let ready = remaining.firstIndex { table in
                table.foreignKeys.allSatisfy { key in
                    let master = key.references.lowercased()
                    return master == table.name.lowercased() || placed.contains(master)
                        || !tables.contains { $0.name.lowercased() == master }
                }
            } ?? 0
            let table = remaining.remove(at: ready)
            placed.insert(table.name.lowercased())
            ordered.append(table)
        }
        return ordered
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(name: container.decode(String.self, forKey: .name),
                      tables: container.decode([TableDefinition].self, forKey: .tables),
                      script: container.decodeIfPresent(RuleScript.self, forKey: .script),
                      updateOrder: container.decodeIfPresent([String].self, forKey: .updateOrder),
                      commands: container.decodeIfPresent([CommandDefinition].self, forKey: .commands) ?? [],
                      serverScript: container.decodeIfPresent(RuleScript.self, forKey: .serverScript))
    }

    /// The schema as a data server sends it to clients: without the server-only scripts
    /// (``serverScript`` and each table's ``TableDefinition/serverScript``), whose text no client
    /// ever receives.
    ///
    /// ```swift
    /// let sent = schema.sharedWithClients
    /// sent.serverScript   // nil
    /// ```
    public var sharedWithClients: SchemaDefinition {
        var shared = self
        shared.serverScript = nil
        for index in shared.tables.indices { shared.tables[index].serverScript = nil }
        return shared
    }

    /// The table with a name (case-insensitive), or nil.
    public func table(named name: String) -> TableDefinition? {
        tables.first { $0.name.equalsIgnoringCase(name) }
    }

    /// Every rule script: the schema-wide ones first (shared, then server-only), then each
    /// table's (shared, then server-only) in order.
    public var scripts: [RuleScript] {
        ([script, serverScript] + tables.flatMap { [$0.script, $0.serverScript] }).compactMap { $0 }
    }

    /// Identifies this exact schema — tables, fields, relationships, update rules and
    /// order, and the text of every script: `sha256:` and 64 hexadecimal digits. A data
    /// server computes it and sends it with the schema; a client compares the version it
    /// validated with against the server's to know its rules are stale.
    public var version: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding plain values with sorted keys cannot fail; an empty digest would only ever mean "stale".
        let bytes = (try? encoder.encode(self)).map(Array.init) ?? []
        return "sha256:" + SHA256.hex(of: bytes)
    }

    private func check() throws {
        func invalid(_ message: String) -> RelataError { RelataError(.invalidSchema, message, location: name) }
        var names: Set<String> = []
        for table in tables where !names.insert(table.name.lowercased()).inserted {
            throw invalid("the table \(table.name) is described twice")
        }
        func requireTable(_ name: String, _ context: String) throws {
            guard names.contains(name.lowercased()) else {
                throw invalid("\(context) names the table '\(name)', which the schema does not describe (tables: \(tables.map(\.name).joined(separator: ", ")))")
            }
        }
        for name in updateOrder { try requireTable(name, "updateOrder") }
        var commandNames: Set<String> = []
        for command in commands {
            guard commandNames.insert(command.name.lowercased()).inserted else { throw invalid("the command \(command.name) is declared twice") }
            guard script != nil || serverScript != nil else {
                throw invalid("the command \(command.name) needs a schema-wide script (or server script) with its function \(command.function)")
            }
        }
        var storedNames: Set<String> = []
        for table in tables {
            guard storedNames.insert(table.physicalName.lowercased()).inserted else {
                throw invalid("two tables are stored as \(table.physicalName)")
            }
            let fieldNames = Set(table.fields.map { $0.name.lowercased() })
            if let unknown = table.columns.keys.first(where: { !fieldNames.contains($0.lowercased()) }) {
                throw invalid("\(table.name).columns names '\(unknown)', which is not a field of the table")
            }
            // (Two fields of one name are the table's own error, reported where its fields are checked.)
            let columnNames = table.fields.map { table.column(of: $0.name).lowercased() }
            if !table.columns.isEmpty, fieldNames.count == table.fields.count, Set(columnNames).count != columnNames.count {
                throw invalid("\(table.name).columns stores two fields in one column")
            }
            for key in table.foreignKeys { try requireTable(key.references, "\(table.name).foreignKeys") }
            for lookup in table.lookupFields { try requireTable(lookup.lookupTable, "\(table.name).lookupFields") }
        }
    }
}

/// A command a data server runs on request: a function of the schema-wide script,
/// called with the request's parameters, whose changes through `lda` are applied with
/// the rules, in one transaction. Refused unless `enabled`, and to sessions without
/// one of `roles` (when roles are given).
///
/// ```swift
/// CommandDefinition(name: "CloseOrder", function: "closeOrder", enabled: true, roles: ["Manager"])
/// ```
public struct CommandDefinition: Sendable, Hashable, Codable {
    public var name: String
    /// The function of the schema-wide script: `function closeOrder(parameters) { … }`.
    public var function: String
    public var enabled: Bool
    /// The roles that may run it; every logged-in user when empty.
    public var roles: [String]

    public init(name: String, function: String, enabled: Bool = false, roles: [String] = []) {
        self.name = name
        self.function = function
        self.enabled = enabled
        self.roles = roles
    }

    private enum CodingKeys: String, CodingKey { case name, function, enabled, roles }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(name: try container.decode(String.self, forKey: .name), function: try container.decode(String.self, forKey: .function),
                  enabled: try container.decodeIfPresent(Bool.self, forKey: .enabled) ?? false,
                  roles: try container.decodeIfPresent([String].self, forKey: .roles) ?? [])
    }
}

/// One table of a ``SchemaDefinition``.
///
/// ```swift
/// TableDefinition(name: "OrderDetails", fields: detailFields,
///                 script: RuleScript(detailsJS, fileName: "OrderDetails.js"),
///                 updateRule: UpdateRule(onFailure: .rollbackAll),
///                 foreignKeys: [ForeignKeyDefinition(field: "OrderId", references: "Orders", referencedField: "OrderId")])
/// ```
public struct TableDefinition: Sendable, Hashable, Codable {
    public var name: String
    /// The stored fields.
    public var fields: [FieldDefinition]
    /// The table's name in the database, when it is not ``name`` (a schema may rename).
    public var storedName: String?
    /// Column names in the database of fields whose column is not named as the field, by field name.
    public var columns: [String: String]
    /// The table's rule script.
    public var script: RuleScript?
    /// The table's script that runs only where the data is kept (a data server, or a
    /// ``LocalDataAdapter`` made from the schema), after ``script``; never sent to clients.
    public var serverScript: RuleScript?
    /// How an apply treats the table's failed changes.
    public var updateRule: UpdateRule
    public var foreignKeys: [ForeignKeyDefinition]
    public var lookupFields: [LookupFieldDefinition]
    public var calculatedFields: [CalculatedFieldDefinition]

    public init(name: String, fields: [FieldDefinition], script: RuleScript? = nil, updateRule: UpdateRule = UpdateRule(),
                foreignKeys: [ForeignKeyDefinition] = [], lookupFields: [LookupFieldDefinition] = [],
                calculatedFields: [CalculatedFieldDefinition] = [], storedName: String? = nil, columns: [String: String] = [:],
                serverScript: RuleScript? = nil) {
        self.name = name
        self.serverScript = serverScript
        self.fields = fields
        self.storedName = storedName
        self.columns = columns
        self.script = script
        self.updateRule = updateRule
        self.foreignKeys = foreignKeys
        self.lookupFields = lookupFields
        self.calculatedFields = calculatedFields
    }

    private enum CodingKeys: String, CodingKey {
        case name, fields, script, updateRule, foreignKeys, lookupFields, calculatedFields, storedName, columns, serverScript
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(name: try container.decode(String.self, forKey: .name), fields: try container.decode([FieldDefinition].self, forKey: .fields),
                  script: try container.decodeIfPresent(RuleScript.self, forKey: .script),
                  updateRule: try container.decodeIfPresent(UpdateRule.self, forKey: .updateRule) ?? UpdateRule(),
                  foreignKeys: try container.decodeIfPresent([ForeignKeyDefinition].self, forKey: .foreignKeys) ?? [],
                  lookupFields: try container.decodeIfPresent([LookupFieldDefinition].self, forKey: .lookupFields) ?? [],
                  calculatedFields: try container.decodeIfPresent([CalculatedFieldDefinition].self, forKey: .calculatedFields) ?? [],
                  storedName: try container.decodeIfPresent(String.self, forKey: .storedName),
                  columns: try container.decodeIfPresent([String: String].self, forKey: .columns) ?? [:],
                  serverScript: try container.decodeIfPresent(RuleScript.self, forKey: .serverScript))
    }

    /// The table's name in the database.
    public var physicalName: String { storedName ?? name }

    /// The database column of a field.
    public func column(of field: String) -> String {
        columns.first { $0.key.equalsIgnoringCase(field) }?.value ?? field
    }
}

/// `field` holds values of `references`.`referencedField` (see ``DataTable/addForeignKey(_:references:field:)``).
public struct ForeignKeyDefinition: Sendable, Hashable, Codable {
    public var field: String
    public var references: String
    public var referencedField: String

    public init(field: String, references: String, referencedField: String) {
        self.field = field
        self.references = references
        self.referencedField = referencedField
    }
}

/// A field whose value is looked up in another table (see ``DataTable/addLookupField(name:sourceField:lookupTable:lookupKeyField:lookupResultField:)``).
public struct LookupFieldDefinition: Sendable, Hashable, Codable {
    public var name: String
    public var sourceField: String
    public var lookupTable: String
    public var lookupKeyField: String
    public var lookupResultField: String

    public init(name: String, sourceField: String, lookupTable: String, lookupKeyField: String, lookupResultField: String) {
        self.name = name
        self.sourceField = sourceField
        self.lookupTable = lookupTable
        self.lookupKeyField = lookupKeyField
        self.lookupResultField = lookupResultField
    }
}

/// A field computed by a JavaScript function of the row: the name of a function in
/// the table's script, or a function expression.
public struct CalculatedFieldDefinition: Sendable, Hashable, Codable {
    public var name: String
    public var type: DataType
    public var function: String
    public var cached: Bool?

    public init(name: String, type: DataType, function: String, cached: Bool? = nil) {
        self.name = name
        self.type = type
        self.function = function
        self.cached = cached
    }
}

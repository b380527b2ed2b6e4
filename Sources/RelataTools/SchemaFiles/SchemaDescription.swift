import Relata
import RelataScript

/// What a schema file says: tables with their fields, data, scripts and
/// relationships, the schema-wide script and the update order. Paths are
/// relative to the schema file. The format is documented in `Documentation/Schema.md`.
///
/// ```json
/// {
///   "name": "PCTrade",
///   "script": "rules/schema.js",
///   "updateOrder": ["Clients", "Orders"],
///   "tables": [
///     {"name": "Clients", "data": "data/Clients.csv", "script": "rules/Clients.js",
///      "fields": [{"name": "ClientId", "type": "autoInc", "primaryKey": true},
///                 {"name": "ClientName", "type": "string", "size": 50, "required": true}]}
///   ]
/// }
/// ```
public struct SchemaDescription: Codable, Sendable, Equatable {
    public var name: String
    public var description: String?
    /// The schema-wide rule script.
    public var script: String?
    /// The schema-wide script that runs only where the data is kept (a data server, an offline
    /// adapter made from this file), after `script`; a server never sends it to clients.
    public var serverScript: String?
    /// Tables in the order their changes are applied (masters before details).
    public var updateOrder: [String]?
    /// Rule test files, or folders of `*.test.js` files, that `relata test` runs by default.
    public var tests: [String]?
    /// Commands a data server runs on request (functions of the schema-wide script).
    public var commands: [CommandDefinition]?
    public var tables: [Table]
    /// The session rules see offline (`relata run`, `relata test`, `Schema.makeAdapter()`),
    /// unless a command line or a test gives another: what a data server's login would give.
    public var session: SessionDescription?

    /// A session as a schema file or a rule test describes it: `{"user": "ann", "roles": ["Sales"],
    /// "values": {"Region": "EU"}}`. Rules see `session.User`, each value, `session.roles`.
    public struct SessionDescription: Codable, Sendable, Equatable {
        public var user: String?
        public var roles: [String]?
        public var values: [String: JSONValue]?

        public init(user: String? = nil, roles: [String]? = nil, values: [String: JSONValue]? = nil) {
            self.user = user
            self.roles = roles
            self.values = values
        }

        /// The session rules see.
        ///
        /// - Throws: ``RelataError`` for a value that is not a field value (an array, an object).
        public func session() throws -> Session {
            var values = try (self.values ?? [:]).mapValues(Value.init(untypedJSON:))
            if let user { values["User"] = .string(user) }
            return Session(values: values, roles: roles ?? [])
        }
    }

    /// One table of a schema.
    public struct Table: Codable, Sendable, Equatable {
        public var name: String
        public var fields: [FieldDefinition]
        /// A CSV or JSON file of original rows.
        public var data: String?
        /// The table's rule script.
        public var script: String?
        /// The table's server-only script: after `script`, where the data is kept; never sent to clients.
        public var serverScript: String?
        /// The table's name in the database, when it differs (`relata serve`).
        public var storedName: String?
        /// Database column names of fields whose column is named differently, by field name.
        public var columns: [String: String]?
        /// `applyOthers` (the default) or `rollbackAll`; see ``UpdateRule``.
        public var updateRule: UpdateRule.FailureBehavior?
        public var foreignKeys: [ForeignKey]?
        public var lookupFields: [LookupField]?
        public var calculatedFields: [CalculatedField]?
    }

    /// `field` holds values of `references`.`referencedField`.
    public typealias ForeignKey = ForeignKeyDefinition
    /// A field whose value is looked up in another table (see `DataTable.addLookupField`).
    public typealias LookupField = LookupFieldDefinition
    /// A field computed by a JavaScript function of the row: the name of a
    /// function in the table's script, or a function expression.
    public typealias CalculatedField = CalculatedFieldDefinition
}

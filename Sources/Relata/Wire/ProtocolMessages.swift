/// The bodies of the protocol's requests and answers (`Documentation/Protocol.md`), shared by
/// the data server and its client.
///
/// ```swift
/// let body = try JSONEncoder().encode(ProtocolMessages.LoginRequest(loginString: "User=ann;Password=secret"))
/// ```
public enum ProtocolMessages {
    /// `LoginService/Login`.
    public struct LoginRequest: Codable, Sendable {
        public var loginString: String
        public init(loginString: String) { self.loginString = loginString }
    }

    /// The answer to a login: the token to send back as `Authorization: Bearer …`.
    public struct LoginAnswer: Codable, Sendable {
        public var token: String
        public var session: Session
        /// True when the session may call `AdminService` (one of the server's admin roles); left out otherwise.
        public var admin: Bool?
        public init(token: String, session: Session, admin: Bool? = nil) {
            self.token = token
            self.session = session
            self.admin = admin
        }
    }

    /// `DataService/GetSchema`: the schema with its rule scripts, its version, and what the
    /// caller's session may do to each table (`read`, `insert`, `update`, `delete`), so a client
    /// can refuse an edit the server would refuse before it sends it.
    public struct SchemaAnswer: Codable, Sendable {
        public var schema: SchemaDefinition
        public var version: String
        /// The operations the caller may make, by table name; nil when the server does not say.
        public var allowed: [String: [String]]?
        /// For each operation the caller may not make, the roles that may, by table name: a
        /// client's refusal names them as the server's does.
        public var rolesAllowed: [String: [String: [String]]]?
        public init(schema: SchemaDefinition, version: String, allowed: [String: [String]]? = nil, rolesAllowed: [String: [String: [String]]]? = nil) {
            self.schema = schema
            self.version = version
            self.allowed = allowed
            self.rolesAllowed = rolesAllowed
        }
    }

    /// `DataService/GetData`.
    public struct GetDataRequest: Codable, Sendable {
        public var requests: [DataRequest]
        public var includeSchema: Bool?
        public init(requests: [DataRequest], includeSchema: Bool? = nil) {
            self.requests = requests
            self.includeSchema = includeSchema
        }
    }

    /// `DataService/SQLGetData`: one DA SQL query; the answer is `GetData`'s, with one table
    /// (named `name`, or `Query`).
    public struct SQLGetDataRequest: Codable, Sendable {
        public var sql: String
        public var parameters: [String: Value]?
        public var maxRecords: Int?
        public var name: String?
        public init(sql: String, parameters: [String: Value]? = nil, maxRecords: Int? = nil, name: String? = nil) {
            self.sql = sql
            self.parameters = parameters
            self.maxRecords = maxRecords
            self.name = name
        }

        /// The request as a ``DataRequest`` of `GetData`.
        public var dataRequest: DataRequest {
            DataRequest(table: name ?? "Query", sql: sql, parameters: parameters ?? [:], maxRecords: maxRecords)
        }
    }

    /// The answer to `GetData`: the tables, in the order asked; the schema when asked for.
    ///
    /// A read that failed after its answer began ends with an `error` member (the protocol's
    /// error details) after the tables sent so far: decoding such an answer throws
    /// ``RelataError/Code/invalidResponse`` with the server's words, never a short answer.
    public struct GetDataAnswer: Codable, Sendable {
        public var tables: [TableData]
        public var schema: SchemaAnswer?
        public init(tables: [TableData], schema: SchemaAnswer? = nil) {
            self.tables = tables
            self.schema = schema
        }

        private enum CodingKeys: String, CodingKey { case tables, schema, error }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if let error = try container.decodeIfPresent(ErrorAnswer.Details.self, forKey: .error) {
                throw RelataError(.invalidResponse, "the answer ended with an error after \(error.table.map { "reading \($0)" } ?? "it began"): \(error.code): \(error.message)",
                                  table: error.table, location: error.location)
            }
            tables = try container.decode([TableData].self, forKey: .tables)
            schema = try container.decodeIfPresent(SchemaAnswer.self, forKey: .schema)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(tables, forKey: .tables)
            try container.encodeIfPresent(schema, forKey: .schema)
        }
    }

    /// `DataService/UpdateData` and its answer: deltas in (with the batch's ``ApplyId``),
    /// processed deltas out.
    public struct UpdateDataMessage: Codable, Sendable {
        public var apply: ApplyId?
        public var deltas: [Delta]
        public init(deltas: [Delta], apply: ApplyId? = nil) {
            self.deltas = deltas
            self.apply = apply
        }
    }

    /// `DataService/ExecuteCommand`: a command the schema declares, with its parameters.
    public struct CommandRequest: Codable, Sendable {
        public var command: String
        public var parameters: [String: Value]?
        public init(command: String, parameters: [String: Value]? = nil) {
            self.command = command
            self.parameters = parameters
        }
    }

    /// What a command returned, and the processed deltas of what it changed.
    public struct CommandAnswer: Codable, Sendable {
        public var result: Value
        public var deltas: [Delta]
        public init(result: Value, deltas: [Delta]) {
            self.result = result
            self.deltas = deltas
        }
    }

    /// Every refusal: a stable code, a message, and what it is about.
    public struct ErrorAnswer: Codable, Sendable {
        public struct Details: Codable, Sendable {
            public var code: String
            public var message: String
            public var table: String?
            public var field: String?
            public var location: String?
            public var event: String?
            public init(code: String, message: String, table: String? = nil, field: String? = nil,
                        location: String? = nil, event: String? = nil) {
                self.code = code
                self.message = message
                self.table = table
                self.field = field
                self.location = location
                self.event = event
            }
        }
        public var error: Details
        public init(error: Details) { self.error = error }
    }
}

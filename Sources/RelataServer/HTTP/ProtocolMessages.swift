import Relata

/// The bodies of the protocol's requests and answers (`Documentation/Protocol.md`).
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
    }

    /// `DataService/GetSchema`: the schema with its rule scripts, and its version.
    public struct SchemaAnswer: Codable, Sendable {
        public var schema: SchemaDefinition
        public var version: String
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

    /// The answer to `GetData`: the tables, in the order asked; the schema when asked for.
    public struct GetDataAnswer: Codable, Sendable {
        public var tables: [TableData]
        public var schema: SchemaAnswer?
    }

    /// `DataService/UpdateData` and its answer: deltas in, processed deltas out.
    public struct UpdateDataMessage: Codable, Sendable {
        public var deltas: [Delta]
        public init(deltas: [Delta]) { self.deltas = deltas }
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
        }
        public var error: Details
    }
}

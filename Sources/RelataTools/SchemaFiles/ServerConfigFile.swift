import Foundation
import Relata

/// A server configuration file (`relata serve --config`, `Documentation/Server.md`):
/// domains, each with its users and schemas, a database per schema, and per-table
/// permissions. Paths are relative to the file.
///
/// ```swift
/// let config = try ServerConfigFile(contentsOf: URL(fileURLWithPath: "server.json"))
/// for domain in config.contents.domains { print(domain.name, domain.schemas.map(\.schema)) }
/// ```
public struct ServerConfigFile: Sendable {
    /// A user: name, bcrypt password hash, roles, session values (plain JSON).
    public struct User: Codable, Sendable, Hashable {
        public var name: String
        public var passwordHash: String
        public var roles: [String]?
        public var values: [String: JSONValue]?
    }

    /// A schema a domain serves: its schema file, its database, and who may do what.
    public struct SchemaEntry: Codable, Sendable, Hashable {
        public var schema: String
        /// The SQLite file; the domain's database when left out.
        public var database: String?
        /// Roles by operation (`read`, `insert`, `update`, `delete`) by table (`*` for the rest);
        /// every logged-in user may do everything when left out.
        public var permissions: [String: [String: [String]]]?
    }

    /// Users kept in a table of one of the domain's schemas (passwords as bcrypt hashes).
    public struct LoginTable: Codable, Sendable, Hashable {
        /// The schema (by name) whose table it is; the domain's first when left out.
        public var schema: String?
        public var table: String
        public var userField: String
        public var passwordField: String
        /// A field of comma-separated role names.
        public var rolesField: String?
        /// Fields whose values become session values.
        public var valueFields: [String]?
        /// Roles that may set the password and roles fields through the protocol (none when left out).
        public var writers: [String]?
    }

    /// A domain: users and the schemas they reach. `users` inline, or a `usersFile`; and/or a `loginTable`.
    public struct Domain: Codable, Sendable, Hashable {
        public var name: String
        /// The domain's SQLite file, which its schemas' tables share; `<domain name>.sqlite`
        /// beside the configuration when left out.
        public var database: String?
        public var users: [User]?
        public var usersFile: String?
        public var loginTable: LoginTable?
        /// Roles `permissions` may name that no user has yet (users' and login tables' roles are known).
        public var roles: [String]?
        public var schemas: [SchemaEntry]
    }

    /// Which other origins' pages may call the server from a browser.
    public struct CORS: Codable, Sendable, Hashable {
        /// Origins as a browser sends them (`https://shop.example.com`), or `*` for every origin.
        public var allowOrigins: [String]
    }

    /// The web console's settings.
    public struct Console: Codable, Sendable, Hashable {
        /// Roles whose users see the console's Server page and may call `AdminService`.
        public var adminRoles: [String]?
    }

    /// The file's contents.
    public struct Contents: Codable, Sendable, Hashable {
        public var host: String?
        public var port: Int?
        /// Cross-origin access for browser pages served elsewhere (none when left out).
        public var cors: CORS?
        /// The web console's settings (no admin roles when left out).
        public var console: Console?
        /// The session database; `sessions.sqlite` beside the configuration when left out.
        public var sessions: String?
        public var domains: [Domain]
    }

    public let contents: Contents
    /// The configuration file.
    public let url: URL

    /// Reads and checks a configuration file.
    ///
    /// - Throws: ``RelataError`` naming the file and the place in it: malformed JSON, an unknown
    ///   or misspelt key, a missing entry, no domain, a domain without schemas, or one giving
    ///   both `users` and `usersFile`.
    public init(contentsOf url: URL) throws {
        self.url = url
        contents = try JSONFile.decode(Contents.self, from: url, what: "server configuration", keys: .serverConfig)
        func invalid(_ message: String) -> RelataError { RelataError(.invalidSchema, message, location: url.path) }
        guard !contents.domains.isEmpty else { throw invalid("domains: the configuration names no domain") }
        for (index, domain) in contents.domains.enumerated() {
            if domain.schemas.isEmpty { throw invalid("domains[\(index)] (\(domain.name)) serves no schema") }
            if domain.users != nil && domain.usersFile != nil { throw invalid("domains[\(index)] (\(domain.name)) gives both users and usersFile") }
            if !domain.name.isEmpty, domain.name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }) == false {
                throw invalid("domains[\(index)]: a domain name is letters, digits, '_' and '-' ('\(domain.name)')")
            }
        }
        if let port = contents.port, !(0...65535).contains(port) { throw invalid("port must be between 0 and 65535, not \(port)") }
    }

    /// A path from the file, resolved against the file's folder.
    public func resolve(_ path: String) -> URL {
        path.hasPrefix("/") ? URL(fileURLWithPath: path) : url.deletingLastPathComponent().appendingPathComponent(path)
    }

    /// The users of a domain: inline, or read from its users file.
    public func users(of domain: Domain) throws -> [User] {
        if let users = domain.users { return users }
        guard let file = domain.usersFile else { return [] }
        return try Self.users(contentsOf: resolve(file))
    }

    /// Reads a users file: a JSON array of users.
    public static func users(contentsOf url: URL) throws -> [User] {
        try JSONFile.decode([User].self, from: url, what: "users file", keys: .users)
    }
}

import Relata

/// Who logs in: the parts of the protocol's login string
/// (`User=…;Password=…;Domain=…;Schema=…`).
///
/// ```swift
/// let credentials = RemoteCredentials(user: "demo", password: "demo", schema: "PCTrade")
/// adapter.credentials = credentials
/// ```
public struct RemoteCredentials: Sendable, Hashable {
    public var user: String
    public var password: String
    /// The server's domain; its first domain when nil.
    public var domain: String?
    /// The schema; the one the data service names (`DataService.PCTrade`), else the domain's first.
    public var schema: String?

    public init(user: String, password: String, domain: String? = nil, schema: String? = nil) {
        self.user = user
        self.password = password
        self.domain = domain
        self.schema = schema
    }

    /// The login string the server reads.
    ///
    /// - Throws: ``RelataError/Code/invalidArgument`` when a part holds a `;` (the login
    ///   string's separator) or a line break; the message names the part, never its value.
    public func loginString() throws -> String {
        var parts = [("User", user), ("Password", password)]
        if let domain { parts.append(("Domain", domain)) }
        if let schema { parts.append(("Schema", schema)) }
        for (name, value) in parts where value.contains(where: { $0 == ";" || $0.isNewline }) {
            throw RelataError(.invalidArgument, "the \(name.lowercased()) cannot contain ';' or a line break: the login string separates its parts with ';'")
        }
        return parts.map { "\($0)=\($1)" }.joined(separator: ";")
    }
}

extension RemoteCredentials: CustomStringConvertible {
    /// Names the user, never the password.
    public var description: String {
        "\(user)\(domain.map { "@\($0)" } ?? "")\(schema.map { " (\($0))" } ?? "")"
    }
}

import Relata

/// One domain of a server: its users and the schemas they reach, each with its data service.
public final class ServerDomain: Sendable {
    public let name: String
    /// The domain's users.
    public let login: LoginService
    /// Data services by schema name (lower case).
    let dataServices: [String: DataService]
    /// The schema `DataService` (without a schema suffix) serves: the first one.
    public let defaultSchema: String

    /// - Throws: ``RelataError/Code/invalidArgument`` without a data service, or with two
    ///   serving schemas of the same name.
    public init(name: String, login: LoginService, dataServices: [DataService]) throws {
        var byName: [String: DataService] = [:]
        for service in dataServices {
            let schema = service.storage.schema.name.lowercased()
            guard byName[schema] == nil else { throw RelataError(.invalidArgument, "the domain \(name) has two schemas named \(schema)") }
            byName[schema] = service
        }
        guard let first = dataServices.first else { throw RelataError(.invalidArgument, "the domain \(name) serves no schema") }
        self.name = name
        self.login = login
        self.dataServices = byName
        defaultSchema = first.storage.schema.name
    }

    /// The data service a service name selects: `DataService` (the default schema) or `DataService.Schema`.
    func dataService(named service: String) throws -> DataService {
        let parts = service.split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.first == "DataService" else {
            throw ProtocolError.notFound("there is no service '\(service)' (services: LoginService, DataService, DataService.<Schema>)")
        }
        let schema = parts.count > 1 ? parts[1] : defaultSchema
        guard let found = dataServices[schema.lowercased()] else {
            throw ProtocolError.notFound("no schema '\(schema)' is served (schemas: \(dataServices.values.map(\.storage.schema.name).sorted().joined(separator: ", ")))")
        }
        return found
    }
}

/// What a server serves: its domains, and the sessions of their users (shared by every
/// instance that uses the same session database).
public final class ServerServices: Sendable {
    public let domains: [ServerDomain]
    public let sessions: SessionStore

    /// - Throws: ``RelataError/Code/invalidArgument`` without a domain, or with two of the same name.
    public init(domains: [ServerDomain], sessions: SessionStore) throws {
        guard !domains.isEmpty else { throw RelataError(.invalidArgument, "a server needs at least one domain") }
        let names = domains.map { $0.name.lowercased() }
        guard Set(names).count == names.count else { throw RelataError(.invalidArgument, "two domains have the same name") }
        self.domains = domains
        self.sessions = sessions
    }

    /// One domain ("default") with its users and schemas.
    public convenience init(dataServices: [DataService], login: LoginService) throws {
        try self.init(domains: [ServerDomain(name: "default", login: login, dataServices: dataServices)], sessions: login.sessions)
    }

    /// Closes every database the services use (their PostgreSQL connections; SQLite files close
    /// with their last use). ``RelataHTTPServer/run(services:configuration:logger:onServerRunning:)`` calls it when the server stops.
    /// Ends the sessions of users whose account went (from the users their domain's providers
    /// know) or whose roles changed since they logged in. The server runs it every few seconds, so a
    /// user removed from a login table, or given other roles there, loses his sessions at once.
    /// - Returns: how many were ended.
    @discardableResult
    public func endSessionsOfChangedAccounts() async throws -> Int {
        let byName = Dictionary(domains.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let sessions = self.sessions
        // Reads of the session and login tables block: off the cooperative pool.
        return try await OffCooperativePool.run { try sessions.endSessionsOfChangedAccounts { user, domain in
            guard let login = byName[domain]?.login else { return nil }
            for provider in login.providers {
                if let account = try provider.account(named: user) { return account.session.roles }
            }
            return nil
        } }
    }

    public func close() {
        for domain in domains {
            for service in domain.dataServices.values { service.storage.database.close() }
        }
        sessions.database.close()
    }

    /// The domain a login string or session names; the first when none is named.
    func domain(named name: String?) throws -> ServerDomain {
        guard let name else { return domains[0] }
        guard let domain = domains.first(where: { $0.name.equalsIgnoringCase(name) }) else {
            throw ProtocolError.loginFailed("there is no domain '\(name)'")
        }
        return domain
    }
}

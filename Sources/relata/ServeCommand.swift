import ArgumentParser
import Foundation
import Logging
import Relata
import RelataServer
import RelataTools

/// `relata serve [SCHEMA]`: a Relata data server for a schema file, on SQLite.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a schema's tables and rules over HTTP (protocol v2), from SQLite or PostgreSQL.",
        discussion: """
            The database — a SQLite file, or a PostgreSQL database given as a postgres:// URL — gets
            the schema's tables and is seeded from its data files on first start, and is reused
            afterwards; sessions are kept there too, so any number of servers on one PostgreSQL
            database serve the same clients. Users come from --users (a JSON array of {name, passwordHash, roles,
            values}; `relata hash-password` makes a hash); without it, a users.json beside the schema
            is used if there is one. Stop the server with Ctrl-C (or SIGTERM): requests in flight finish.

            With --config, a configuration file gives the domains, their users and schemas, a
            database per schema and per-table permissions (Documentation/Server.md).

            Examples:
              relata serve                                   # Examples/PCTrade, from the current folder
              relata serve Shop/Shop.schema.json --port 8080 --database /var/lib/shop.sqlite
              relata serve Shop/Shop.schema.json --database postgres://shop:secret@127.0.0.1:5432/shop
              relata serve --config server.json
            """)

    @Argument(help: "The schema file (JSON); Examples/PCTrade/PCTrade.schema.json when left out.")
    var schema: String?

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on (0 picks a free one).")
    var port = 7099

    @Option(help: ArgumentHelp("The database: a SQLite file, or postgres://user:password@host:port/database; <schema name>.sqlite in the current folder when left out.",
                               valueName: "file-or-url"))
    var database: String?

    @Option(help: "The users file (JSON).")
    var users: String?

    @Option(help: "A server configuration file (JSON): domains, users, schemas, databases, permissions.")
    var config: String?

    @Option(help: ArgumentHelp("How long computing a read may take — a DA SQL query, in the database or in memory, or a where expression evaluated in memory — before it is stopped.", valueName: "seconds"))
    var queryTimeLimit: Double = 30

    @Option(help: ArgumentHelp("How long the server remembers an applied batch's apply id and answer, so a client's retry is answered instead of applied again. Keep it longer than your clients stay offline.", valueName: "days"))
    var applyIdDays = 30

    @Option(help: ArgumentHelp("How long a session lasts after its last use.", valueName: "seconds"))
    var sessionIdleTimeout: Double = 8 * 3600

    @Option(help: ArgumentHelp("How long a session lasts at most after its login, however much it is used.", valueName: "seconds"))
    var sessionLifetime: Double = 24 * 3600

    @Option(help: ArgumentHelp("How long one write of an answer may wait for a client that does not read before its connection is closed.", valueName: "seconds"))
    var writeTimeout: Double = 15

    @Option(help: ArgumentHelp("How long a connection may stay idle, or take to send a request's head, before it is closed.", valueName: "seconds"))
    var idleTimeout: Double = 30

    @Option(help: ArgumentHelp("How long a request's body may take to arrive (answered 408 after).", valueName: "seconds"))
    var bodyTimeout: Double = 60

    @Option(help: ArgumentHelp("The largest body of an UpdateData (the changes), in bytes.", valueName: "bytes"))
    var maxBodyBytes = 32 << 20

    @Option(help: ArgumentHelp("The largest body of a read or a command (GetData, SQLGetData, ExecuteCommand), in bytes.", valueName: "bytes"))
    var maxQueryBodyBytes = 1 << 20

    @Option(help: ArgumentHelp("The largest body of a login, a logout or a GetSchema, in bytes.", valueName: "bytes"))
    var maxLoginBodyBytes = 64 << 10

    @Option(help: ArgumentHelp("The most bytes of request bodies held at once, across all requests; more are answered 503.", valueName: "bytes"))
    var maxBodyBytesInFlight = 256 << 20

    @Option(help: ArgumentHelp("Password checks run at once (each is slow on purpose); half the cores when left out.", valueName: "count"))
    var loginWorkers = max(1, ProcessInfo.processInfo.activeProcessorCount / 2)

    @Option(help: ArgumentHelp("Rule runtimes of each schema: units of work (applies, commands, rule reads) at once; four per core, at least sixteen, when left out.", valueName: "count"))
    var ruleRuntimes = DataService.defaultRuntimes

    @Option(help: ArgumentHelp("Logins that may wait for a password check; more are answered 503 with Retry-After.", valueName: "count"))
    var loginQueue = 16

    @Option(help: ArgumentHelp("How long requests in flight may take to finish when the server is stopped.", valueName: "seconds"))
    var shutdownGrace: Double = 10

    @Option(name: .customLong("cors-allow-origin"),
            help: ArgumentHelp("An origin whose pages may call the server from a browser ('https://shop.example.com', or '*' for any); repeat for more. Adds to a --config file's cors.allowOrigins.",
                               valueName: "origin"))
    var corsAllowOrigins: [String] = []

    @Option(name: .customLong("console-admin-role"),
            help: ArgumentHelp("A role whose users see the console's Server page (health, sessions, recent refusals of their domain) and may call AdminService; repeat for more. Adds to a --config file's console.adminRoles.",
                               valueName: "role"))
    var consoleAdminRoles: [String] = []

    @OptionGroup(title: "Logging")
    var log: LogOptions

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535, not \(port)") }
        for (name, value) in [("--query-time-limit", queryTimeLimit), ("--write-timeout", writeTimeout), ("--idle-timeout", idleTimeout),
                              ("--body-timeout", bodyTimeout), ("--shutdown-grace", shutdownGrace)] {
            guard value.isFinite, value > 0, value <= 86_400 else {
                throw ValidationError("\(name) must be more than 0 and at most 86400 seconds, not \(value)")
            }
        }
        for (name, value) in [("--session-idle-timeout", sessionIdleTimeout), ("--session-lifetime", sessionLifetime)] {
            guard value.isFinite, value > 0, value <= 31_536_000 else {
                throw ValidationError("\(name) must be more than 0 and at most 31536000 seconds (a year), not \(value)")
            }
        }
        guard (1...(1 << 30)).contains(maxBodyBytes) else { throw ValidationError("--max-body-bytes must be between 1 and 1073741824, not \(maxBodyBytes)") }
        guard (1...(1 << 30)).contains(maxQueryBodyBytes) else {
            throw ValidationError("--max-query-body-bytes must be between 1 and 1073741824, not \(maxQueryBodyBytes)")
        }
        guard (1...(1 << 30)).contains(maxLoginBodyBytes) else {
            throw ValidationError("--max-login-body-bytes must be between 1 and 1073741824, not \(maxLoginBodyBytes)")
        }
        guard (1...(1 << 40)).contains(maxBodyBytesInFlight) else {
            throw ValidationError("--max-body-bytes-in-flight must be between 1 and 1099511627776, not \(maxBodyBytesInFlight)")
        }
        guard (1...3650).contains(applyIdDays) else { throw ValidationError("--apply-id-days must be between 1 and 3650, not \(applyIdDays)") }
        guard (1...1024).contains(loginWorkers) else { throw ValidationError("--login-workers must be between 1 and 1024, not \(loginWorkers)") }
        guard (1...1024).contains(ruleRuntimes) else { throw ValidationError("--rule-runtimes must be between 1 and 1024, not \(ruleRuntimes)") }
        guard (0...100_000).contains(loginQueue) else { throw ValidationError("--login-queue must be between 0 and 100000, not \(loginQueue)") }
        if config != nil && (schema != nil || database != nil || users != nil) {
            throw ValidationError("--config gives the schemas, databases and users; leave out the schema file, --database and --users")
        }
        do {
            _ = try CORSPolicy(allowOrigins: corsAllowOrigins)
        } catch {
            throw ValidationError("--cors-allow-origin: \(describe(error))")
        }
    }

    func run() async throws {
        log.bootstrap()
        let logger = Logger(label: "relata.server")
        let prepared: (services: ServerServices, schemaName: String, watched: [any ServeWatch], roles: Set<String>)
        var host = self.host, port = self.port
        let cors: CORSPolicy
        var adminRoles = consoleAdminRoles
        do {
            var origins = corsAllowOrigins
            if let config {
                let file = try ServerConfigFile(contentsOf: URL(fileURLWithPath: config))
                prepared = try prepare(file, logger: logger)
                host = file.contents.host ?? host
                port = file.contents.port ?? port
                origins = (file.contents.cors?.allowOrigins ?? []) + origins
                adminRoles = (file.contents.console?.adminRoles ?? []) + adminRoles
                do {
                    cors = try CORSPolicy(allowOrigins: origins)
                    try Self.checkAdminRoles(adminRoles, known: prepared.roles)
                } catch let error as RelataError {
                    throw RelataError(error.code, error.message, location: file.url.path)
                }
            } else {
                prepared = try prepare(logger: logger)
                cors = try CORSPolicy(allowOrigins: origins)
                try Self.checkAdminRoles(adminRoles, known: prepared.roles)
            }
        } catch {
            logger.audit(.startRefused, "the server did not start: \(describe(error))", level: .critical)
            throw ExitStatus.badInput
        }
        let configuration = ServerConfiguration(host: host, port: port, maxBodyBytes: maxBodyBytes, maxBodyBytesBeforeSession: maxLoginBodyBytes,
                                                maxQueryBodyBytes: maxQueryBodyBytes,
                                                maxBodyBytesInFlight: maxBodyBytesInFlight,
                                                idleTimeout: Self.duration(idleTimeout), bodyTimeout: Self.duration(bodyTimeout),
                                                writeTimeout: Self.duration(writeTimeout), loginWorkers: loginWorkers, loginQueue: loginQueue,
                                                shutdownGrace: Self.duration(shutdownGrace), cors: cors,
                                                adminRoles: adminRoles)
        // Rules and users files reload while the server runs: they are checked every second.
        // Every few seconds, the sessions of accounts removed or given other roles (in a login table) end.
        let watcher = Task { [watched = prepared.watched, services = prepared.services] in
            var seconds = 0
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                for watch in watched { watch.reloadIfChanged(logger: logger) }
                seconds += 1
                guard seconds % 5 == 0 else { continue }
                do {
                    let ended = try await services.endSessionsOfChangedAccounts()
                    if ended > 0 { logger.audit(.sessionsEnded, "ended \(ended) session(s) whose account went or has other roles now") }
                } catch {
                    logger.error("the sessions could not be checked against their accounts: \(describe(error))")
                }
            }
        }
        defer { watcher.cancel() }
        do {
            try await RelataHTTPServer.run(services: prepared.services, configuration: configuration, logger: logger) { [host] port in
                Terminal.printNow("serving \(prepared.schemaName) on http://\(host):\(port) (protocol v\(RelataHTTPServer.protocolVersion)); Ctrl-C stops")
            }
        } catch {
            let text = "\(error)"
            if text.contains("Address already in use") || text.contains("EADDRINUSE") {
                logger.audit(.startRefused, "port \(port) on \(host) is taken by another program; choose another with --port", level: .critical)
            } else {
                logger.critical("the server stopped: \(text)")
            }
            throw ExitStatus.badInput
        }
    }

    private func prepare(logger: Logger) throws -> (services: ServerServices, schemaName: String, watched: [any ServeWatch], roles: Set<String>) {
        let path = schema ?? "Examples/PCTrade/PCTrade.schema.json"
        guard FileManager.default.fileExists(atPath: path) else {
            throw RelataError(.fileFailed, schema == nil
                ? "no schema file given, and Examples/PCTrade/PCTrade.schema.json is not in the current folder; name a schema file"
                : "the schema file does not exist", location: path)
        }
        let schemaFile = try Schema(contentsOf: URL(fileURLWithPath: path))
        let definition = try schemaFile.definition()
        let usersPath = users ?? schemaFile.resolve("users.json").path
        let userList: [ServerUser]
        if FileManager.default.fileExists(atPath: usersPath) {
            userList = try Self.serverUsers(ServerConfigFile.users(contentsOf: URL(fileURLWithPath: usersPath)))
        } else if users != nil {
            throw RelataError(.fileFailed, "the users file does not exist", location: usersPath)
        } else {
            userList = []
            logger.warning("no users file: nobody can log in (give one with --users)")
        }
        let location = database ?? "\(definition.name).sqlite"
        let opened = try Self.open(location, logger: logger)
        let storage = try SQLStorage(database: opened, schema: definition)
        if try storage.seedIfEmpty(with: schemaFile.dataTables()) {
            logger.info("created and seeded \(Self.shown(location)) from the schema's data files")
        }
        let sessions = opened is PostgresDatabase ? try SessionStore(database: opened, lifetime: sessionIdle, maxLifetime: sessionMaximum)
            : try SessionStore(path: location == ":memory:" ? ":memory:" : location + "-sessions", lifetime: sessionIdle, maxLifetime: sessionMaximum)
        let service = try DataService(storage: storage, runtimes: ruleRuntimes, queryTimeLimit: Self.duration(queryTimeLimit),
                                      applyIdRetention: .seconds(applyIdDays * 86_400), logger: logger)
        if !userList.isEmpty { Self.warnOpen([definition.name], logger: logger) }
        let staticUsers = StaticUsers(userList)
        var watched: [any ServeWatch] = [RulesWatch(schemaFile: schemaFile.url, service: service)]
        if FileManager.default.fileExists(atPath: usersPath) {
            watched.append(UsersWatch(usersFile: URL(fileURLWithPath: usersPath), place: "the server", provider: staticUsers))
        }
        return (try ServerServices(dataServices: [service], login: LoginService(providers: [staticUsers], sessions: sessions)), definition.name, watched,
                Set(userList.flatMap(\.roles)))
    }

    /// Refuses an admin role no user has: a misspelt one would quietly hide the console's Server page.
    private static func checkAdminRoles(_ adminRoles: [String], known: Set<String>) throws {
        for role in adminRoles where !known.contains(role) {
            throw RoleNames.unknown(role, namedBy: "console.adminRoles names", known: known)
        }
    }

    /// The one warning a server without permissions gives at its start.
    private static func warnOpen(_ schemas: [String], logger: Logger) {
        logger.warning("no permissions for \(schemas.joined(separator: ", ")): every logged-in user may read and change every table there (give permissions in a --config file; Documentation/Server.md, Security)")
    }

    static func serverUsers(_ users: [ServerConfigFile.User]) throws -> [ServerUser] {
        try users.map { user in
            ServerUser(name: user.name, passwordHash: user.passwordHash, roles: user.roles ?? [],
                       values: try (user.values ?? [:]).mapValues(Value.init(untypedJSON:)))
        }
    }

    /// The services a configuration file describes: each domain's users and schemas.
    private func prepare(_ file: ServerConfigFile, logger: Logger) throws -> (services: ServerServices, schemaName: String, watched: [any ServeWatch], roles: Set<String>) {
        let sessions = try SessionStore(database: Self.open(file.contents.sessions.map { Self.isPostgres($0) ? $0 : file.resolve($0).path }
                                                             ?? file.resolve("sessions.sqlite").path, logger: logger, synchronous: false),
                                        lifetime: sessionIdle, maxLifetime: sessionMaximum)
        var domains: [ServerDomain] = []
        var served: [String] = []
        var watched: [any ServeWatch] = []
        var open: [String] = []
        var everyRole = Set<String>()
        for domain in file.contents.domains {
            let users = try Self.serverUsers(file.users(of: domain))
            var tablesByDatabase: [String: [String: String]] = [:]
            let services = try domain.schemas.enumerated().map { position, entry -> DataService in
                let schemaFile = try Schema(contentsOf: file.resolve(entry.schema))
                let definition = try schemaFile.definition()
                let named = entry.database ?? domain.database ?? "\(domain.name).sqlite"
                let databasePath = Self.isPostgres(named) ? named : file.resolve(named).path
                for table in definition.tables {
                    if let other = tablesByDatabase[databasePath]?[table.name.lowercased()] {
                        throw RelataError(.invalidSchema, "the schemas \(other) and \(definition.name) of domain \(domain.name) both have a table \(table.name) in \(databasePath); give one of them its own database",
                                          location: file.url.path)
                    }
                    tablesByDatabase[databasePath, default: [:]][table.name.lowercased()] = definition.name
                }
                let storage = try SQLStorage(database: Self.open(databasePath, logger: logger), schema: definition)
                if try storage.seedIfEmpty(with: schemaFile.dataTables()) {
                    logger.info("created and seeded \(Self.shown(databasePath)) from the schema's data files")
                }
                served.append("\(domain.name)/\(definition.name)")
                let permissions = try entry.permissions.map(TablePermissions.init) ?? .allowAll
                // The schema holding the login table keeps its passwords unread and its passwords and roles guarded.
                let loginTable = domain.loginTable.flatMap { table -> LoginTableFields? in
                    let hosts = table.schema.map { $0.equalsIgnoringCase(definition.name) } ?? (position == 0)
                    return hosts ? LoginTableFields(table: table.table, passwordField: table.passwordField, rolesField: table.rolesField,
                                                    writers: table.writers ?? []) : nil
                }
                let service = try DataService(storage: storage, permissions: permissions, runtimes: ruleRuntimes,
                                              queryTimeLimit: Self.duration(queryTimeLimit),
                                              applyIdRetention: .seconds(applyIdDays * 86_400), loginTable: loginTable, logger: logger)
                watched.append(RulesWatch(schemaFile: schemaFile.url, service: service))
                return service
            }
            let staticUsers = StaticUsers(users)
            if let usersFile = domain.usersFile {
                watched.append(UsersWatch(usersFile: file.resolve(usersFile), place: "domain \(domain.name)", provider: staticUsers))
            }
            var providers: [any LoginProvider] = [staticUsers]
            var roles = Set(users.flatMap(\.roles)).union(domain.roles ?? [])
            if let table = domain.loginTable {
                guard let service = table.schema.map({ name in services.first { $0.storage.schema.name.equalsIgnoringCase(name) } })
                        ?? services.first else {
                    throw RelataError(.invalidSchema, "domains \(domain.name): loginTable names the schema '\(table.schema ?? "")', which the domain does not serve",
                                      location: file.url.path)
                }
                let tableUsers = try TableUsers(storage: service.storage, table: table.table, userField: table.userField,
                                                passwordField: table.passwordField, rolesField: table.rolesField, valueFields: table.valueFields ?? [])
                // Its passwords and roles are readable and writable by every logged-in user unless permissions close it.
                guard service.permissions.names(table: tableUsers.table) else {
                    throw RelataError(.invalidSchema, "domains \(domain.name): the login table \(tableUsers.table) holds passwords and roles, and every logged-in user may read and change it unless the permissions of \(service.storage.schema.name) name it; "
                                      + "give it an entry (\"\(tableUsers.table)\": {} closes it to everyone)", location: file.url.path)
                }
                roles.formUnion(try tableUsers.rolesInUse())
                providers.append(tableUsers)
            }
            everyRole.formUnion(roles)
            for service in services {
                do {
                    try service.permissions.checkNames(tables: service.storage.schema.tables.map(\.name), roles: roles)
                } catch let error as RelataError {
                    throw RelataError(.invalidSchema, "domains \(domain.name), schema \(service.storage.schema.name): \(error.message)", location: file.url.path)
                }
                if service.permissions.allowsEveryone { open.append("\(domain.name)/\(service.storage.schema.name)") }
            }
            domains.append(try ServerDomain(name: domain.name, login: LoginService(providers: providers, sessions: sessions), dataServices: services))
        }
        if !open.isEmpty { Self.warnOpen(open, logger: logger) }
        return (try ServerServices(domains: domains, sessions: sessions), served.joined(separator: ", "), watched, everyRole)
    }
}

/// `relata hash-password`: a bcrypt hash for a users file, from standard input.
struct HashPasswordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hash-password",
        abstract: "Read a password from standard input and print its bcrypt hash, for a users file.")

    @Option(help: "The bcrypt cost (4–31; each step doubles the work).")
    var cost = 12

    func validate() throws {
        guard (4...31).contains(cost) else { throw ValidationError("--cost must be between 4 and 31, not \(cost)") }
    }

    func run() throws {
        guard let line = readLine(strippingNewline: true), !line.isEmpty else {
            Terminal.error("give the password on standard input")
            throw ExitStatus.badInput
        }
        Terminal.print(ServerUser.hash(password: line, cost: UInt8(cost)))
    }
}

extension ServeCommand {
    /// Seconds from the command line (checked to be in 0…86400 by `validate`).
    private var sessionIdle: Duration { Self.duration(sessionIdleTimeout) }
    private var sessionMaximum: Duration { Self.duration(sessionLifetime) }

    static func duration(_ seconds: Double) -> Duration {
        .milliseconds(Int64((seconds * 1000).rounded()))
    }

    static func isPostgres(_ location: String) -> Bool {
        location.hasPrefix("postgres://") || location.hasPrefix("postgresql://")
    }

    /// A database by location: a postgres:// URL, else a SQLite file path.
    static func open(_ location: String, logger: Logger, synchronous: Bool = true) throws -> any SQLDatabase {
        isPostgres(location) ? try PostgresDatabase(url: location, logger: logger) : try SQLiteDatabase(path: location, synchronous: synchronous)
    }

    /// A database location as logs may show it: a URL's password left out.
    static func shown(_ location: String) -> String {
        guard isPostgres(location), var components = URLComponents(string: location), components.password != nil else { return location }
        components.password = nil
        return components.string ?? "a PostgreSQL database"
    }
}

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
        abstract: "Serve a schema's tables and rules over HTTP (protocol v1), from a SQLite database.",
        discussion: """
            The database is created and seeded from the schema's data files on first start, and
            reused afterwards. Users come from --users (a JSON array of {name, passwordHash, roles,
            values}; `relata hash-password` makes a hash); without it, a users.json beside the schema
            is used if there is one. Stop the server with Ctrl-C (or SIGTERM): requests in flight finish.

            Examples:
              relata serve                                   # Examples/PCTrade, from the current folder
              relata serve Shop/Shop.schema.json --port 8080 --database /var/lib/shop.sqlite
            """)

    @Argument(help: "The schema file (JSON); Examples/PCTrade/PCTrade.schema.json when left out.")
    var schema: String?

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on (0 picks a free one).")
    var port = 7099

    @Option(help: "The SQLite database file; <schema name>.sqlite in the current folder when left out.")
    var database: String?

    @Option(help: "The users file (JSON).")
    var users: String?

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535, not \(port)") }
    }

    func run() async throws {
        var logger = Logger(label: "relata.server")
        logger.logLevel = .info
        let prepared: (services: ServerServices, schemaName: String)
        do {
            prepared = try prepare(logger: logger)
        } catch {
            Terminal.error(describe(error))
            throw ExitStatus.badInput
        }
        let configuration = ServerConfiguration(host: host, port: port)
        let app = RelataHTTPServer.application(services: prepared.services, configuration: configuration, logger: logger) { [host] port in
            Terminal.printNow("serving \(prepared.schemaName) on http://\(host):\(port) (protocol v\(RelataHTTPServer.protocolVersion)); Ctrl-C stops")
        }
        do {
            try await app.runService()
        } catch {
            let text = "\(error)"
            if text.contains("Address already in use") || text.contains("EADDRINUSE") {
                Terminal.error("port \(port) on \(host) is taken by another program; choose another with --port")
            } else {
                Terminal.error("the server stopped: \(text)")
            }
            throw ExitStatus.badInput
        }
    }

    private func prepare(logger: Logger) throws -> (services: ServerServices, schemaName: String) {
        let path = schema ?? "Examples/PCTrade/PCTrade.schema.json"
        guard FileManager.default.fileExists(atPath: path) else {
            throw RelataError(.fileFailed, schema == nil
                ? "no schema file given, and Examples/PCTrade/PCTrade.schema.json is not in the current folder; name a schema file"
                : "the schema file does not exist", location: path)
        }
        let schemaFile = try Schema(contentsOf: URL(fileURLWithPath: path))
        let definition = try schemaFile.definition()
        let databasePath = database ?? "\(definition.name).sqlite"
        let storage = try SQLiteStorage(path: databasePath, schema: definition)
        if try storage.seedIfEmpty(with: schemaFile.dataTables()) {
            logger.info("created and seeded \(databasePath) from the schema's data files")
        }
        let usersPath = users ?? schemaFile.resolve("users.json").path
        let userList: [ServerUser]
        if FileManager.default.fileExists(atPath: usersPath) {
            do {
                userList = try JSONDecoder().decode([ServerUser].self, from: InputFile.data(at: URL(fileURLWithPath: usersPath), what: "users file"))
            } catch let error as DecodingError {
                throw RelataError(.invalidSchema, "the users file is not a JSON array of {name, passwordHash, roles, values}: \(error)", location: usersPath)
            }
        } else if users != nil {
            throw RelataError(.fileFailed, "the users file does not exist", location: usersPath)
        } else {
            userList = []
            logger.warning("no users file: nobody can log in (give one with --users)")
        }
        let sessions = try SessionStore(path: databasePath == ":memory:" ? ":memory:" : databasePath + "-sessions")
        let service = try DataService(storage: storage, logger: logger)
        return (try ServerServices(dataServices: [service], login: LoginService(users: userList, sessions: sessions)), definition.name)
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

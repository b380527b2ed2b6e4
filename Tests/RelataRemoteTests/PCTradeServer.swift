import Foundation
import RelataServerTestSupport
import Hummingbird
import Logging
import Relata
import RelataRemote
@testable import RelataServer
import RelataTools

/// The PCTrade example served from a fresh SQLite database in a temporary folder, on a free
/// loopback port, for the length of a test — what `relata serve` does, in-process.
/// Users: `demo` (password `demo`, roles Sales and Manager) and `clerk` (`clerk`, role Clerk).
final class PCTradeServer: Sendable {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let schemaFile = packageRoot.appendingPathComponent("Examples/PCTrade/PCTrade.schema.json")

    /// The users, each with the roles and values of his sessions (the password is the name).
    static let users: KeyValuePairs<String, Session> = [
        "demo": Session(values: ["UserId": 1], roles: ["Sales", "Manager"]),
        "clerk": Session(values: ["UserId": 2], roles: ["Clerk"]),
    ]

    /// The session rules see for a user's login (but its domain): what offline rules need to
    /// give the same verdicts.
    static func session(of user: String) -> Session {
        var session = users.first { $0.key == user }?.value ?? Session()
        session.values["User"] = .string(user)
        return session
    }

    let folder: URL
    let service: DataService
    let services: ServerServices

    /// - Parameters:
    ///   - backend: where the data lives: a SQLite file, or a PostgreSQL database of its own.
    ///   - adjust: changes to the PCTrade schema this server serves (a command, a script).
    init(permissions: TablePermissions = .allowAll, backend: StorageBackend = .sqlite,
         adjust: (inout SchemaDefinition) throws -> Void = { _ in }) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("relata-remote-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let schemaFile = try Schema(contentsOf: Self.schemaFile)
        var definition = try schemaFile.definition()
        try adjust(&definition)
        let (database, cleanup) = try backend.makeDatabase(in: folder)
        self.cleanup = cleanup
        let storage = try SQLStorage(database: database, schema: definition)
        _ = try storage.seedIfEmpty(with: schemaFile.dataTables())
        var logger = Logger(label: "relata.test-server")
        logger.logLevel = .critical
        service = try DataService(storage: storage, permissions: permissions, logger: logger)
        let sessions = try SessionStore(path: folder.appendingPathComponent("sessions.sqlite").path)
        let users = Self.users.map { name, session in
            ServerUser(name: name, passwordHash: ServerUser.hash(password: name, cost: 4), roles: session.roles, values: session.values)
        }
        services = try ServerServices(dataServices: [service], login: LoginService(users: users, sessions: sessions))
    }

    private let cleanup: @Sendable () -> Void

    deinit {
        cleanup()
        try? FileManager.default.removeItem(at: folder)
    }

    /// Runs `body` with the server's address while it serves.
    nonisolated(nonsending) func serve(_ body: nonisolated(nonsending) (URL) async throws -> Void) async throws {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        var logger = Logger(label: "relata.test-server")
        logger.logLevel = .critical
        let app = RelataHTTPServer.application(services: services, configuration: ServerConfiguration(port: 0), logger: logger) { port in
            continuation.yield(port)
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.runService(gracefulShutdownSignals: []) }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw CancellationError() }
            do {
                try await body(URL(string: "http://127.0.0.1:\(port)")!)
            } catch {
                group.cancelAll()
                throw error
            }
            group.cancelAll()
        }
    }

    /// A table's stored rows, by its key's value.
    func storedRows(_ table: String, key: String) throws -> [Int64: [String: Value]] {
        Dictionary(uniqueKeysWithValues: try service.storedRows(of: table).map { ($0[key]?.integerValue ?? 0, $0) })
    }
}

/// An adapter logged in as `demo` on a server.
func demoAdapter(_ url: URL) -> RemoteDataAdapter {
    let adapter = RemoteDataAdapter(targetURL: url, dataService: "DataService.PCTrade")
    adapter.credentials = RemoteCredentials(user: "demo", password: "demo")
    return adapter
}

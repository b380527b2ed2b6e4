// Where the server benchmark keeps its data, and its floor: the same database read and
// written directly, without Relata.
import CBenchmarkSupport
import Foundation
import Logging
import PostgresNIO
import Relata
import RelataServer

protocol BenchStore: Sendable {
    /// The database the server runs on (a fresh one: the benchmark seeds it).
    func openDatabase() throws -> any SQLDatabase
    /// Where sessions are kept.
    func openSessions(_ database: any SQLDatabase) throws -> SessionStore
    /// What the fetch is compared with, for the table (`SQLite in-process into Swift structs`).
    var fetchFloor: String { get }
    /// What the apply is compared with (`one raw SQLite transaction`).
    var applyFloor: String { get }
    /// Reads every client into Swift structs; how many.
    func readClients() async throws -> Int
    /// `UPDATE Items SET Quantity = Quantity + 1` for ids 1…count, one statement each, in one transaction.
    func incrementQuantities(_ count: Int) async throws
}

/// A SQLite file; the floor is SQLite's C API on the same file.
struct SQLiteBenchStore: BenchStore {
    let path: String
    var fetchFloor: String { "SQLite in-process into Swift structs" }
    var applyFloor: String { "one raw SQLite transaction" }

    func openDatabase() throws -> any SQLDatabase { try SQLiteDatabase(path: path) }
    func openSessions(_ database: any SQLDatabase) throws -> SessionStore { try SessionStore(path: path + "-sessions") }
    func readClients() async throws -> Int { SQLiteFile(path: path).readClients().count }
    func incrementQuantities(_ count: Int) async throws { SQLiteFile(path: path).incrementQuantities(count) }
}

/// A PostgreSQL database of its own on the server `RELATA_POSTGRES_URL` names, dropped at
/// the end; the floor is postgres-nio on one connection.
final class PostgresBenchStore: BenchStore {
    let url: String
    private let admin: RelataServer.PostgresDatabase
    private let name: String

    init(serverURL: String) throws {
        let name = "relata_bench_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let admin = try RelataServer.PostgresDatabase(url: serverURL, maxConnections: 1, logger: quietLogger)
        try admin.write { connection in _ = try connection.execute("CREATE DATABASE \(name)", []) }
        self.name = name
        self.admin = admin
        guard var components = URLComponents(string: serverURL) else { throw RelataError(.invalidArgument, "not a URL") }
        components.path = "/" + name
        url = components.string ?? serverURL
    }

    func drop() {
        _ = try? admin.write { connection in try connection.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)", []) }
        admin.close()
    }

    var fetchFloor: String { "postgres-nio into Swift structs" }
    var applyFloor: String { "the same UPDATEs through postgres-nio in one transaction" }

    func openDatabase() throws -> any SQLDatabase { try RelataServer.PostgresDatabase(url: url, logger: quietLogger) }
    func openSessions(_ database: any SQLDatabase) throws -> SessionStore { try SessionStore(database: database) }

    private func withConnection<T>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        let connection = try await PostgresConnection.connect(configuration: RelataServer.PostgresDatabase.configuration(from: url), id: 1, logger: quietLogger)
        do {
            let result = try await body(connection)
            try await connection.close()
            return result
        } catch {
            try? await connection.close()
            throw error
        }
    }

    func readClients() async throws -> Int {
        try await withConnection { connection in
            let rows = try await connection.query(#"SELECT "Id", "Name", "City", "Balance", "Since", "Active" FROM "Clients""#, logger: quietLogger)
            var records: [ClientRecord] = []
            for try await (id, name, city, balance, since, active) in rows.decode((Int64, String, String, Double, Date, Bool).self) {
                records.append(ClientRecord(id: id, name: name, city: city, balance: balance, since: since, active: active))
            }
            return records.count
        }
    }

    func incrementQuantities(_ count: Int) async throws {
        try await withConnection { connection in
            _ = try await connection.query("BEGIN", logger: quietLogger)
            for id in 1...count {
                _ = try await connection.query(#"UPDATE "Items" SET "Quantity" = "Quantity" + 1 WHERE "ItemId" = \#(Int64(id))"#, logger: quietLogger)
            }
            _ = try await connection.query("COMMIT", logger: quietLogger)
        }
    }

    /// The best PostgreSQL can do: one statement for every row.
    func incrementQuantitiesInOneStatement(_ count: Int) async throws {
        try await withConnection { connection in
            _ = try await connection.query(#"UPDATE "Items" SET "Quantity" = "Quantity" + 1 WHERE "ItemId" BETWEEN 1 AND \#(Int64(count))"#, logger: quietLogger)
        }
    }
}

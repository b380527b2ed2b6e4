import CBenchmarkSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Hummingbird
import Logging
import Relata

let quietLogger: Logger = {
    var logger = Logger(label: "relata.bench")
    logger.logLevel = .error
    return logger
}()

/// Passes the port a server bound from its `onServerRunning` to the code waiting for it.
enum PortBox {
    static let (ports, continuation) = AsyncStream<Int>.makeStream()
    @Sendable static func report(_ port: Int) async { continuation.yield(port) }
}

/// Runs an application until `body` is done with it.
func withServer<App: ApplicationProtocol, Result: Sendable>(_ app: App, _ body: (Int) async throws -> Result) async throws -> Result {
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await app.runService(gracefulShutdownSignals: []) }
        var ports = PortBox.ports.makeAsyncIterator()
        guard let port = await ports.next() else { throw CancellationError() }
        defer { group.cancelAll() }
        return try await body(port)
    }
}

/// A handler that answers every POST with the same bytes: the framework's floor.
func bareServer(answer: Data) -> some ApplicationProtocol {
    let router = Router()
    let bytes = ByteBuffer(bytes: answer)
    router.post("v2/:service/:method") { _, _ in
        Response(status: .ok, headers: [.contentType: RowStream.contentType], body: ResponseBody(byteBuffer: bytes))
    }
    return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                       onServerRunning: { await PortBox.report($0.localAddress?.port ?? 0) }, logger: quietLogger)
}

/// The protocol over URLSession, reading GetData answers as they stream in.
struct BenchClient: Sendable {
    let port: Int

    func post(_ path: String, body: Data, token: String? = nil, accept: String? = nil, prefer: String? = nil,
              contentType: String = "application/json") async throws -> Data {
        var request = request(path, body: body, token: token, accept: accept)
        request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        if let prefer { request.setValue(prefer, forHTTPHeaderField: "Prefer") }
        let (data, response) = try await URLSession.shared.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            throw RelataError(.invalidResponse, "\(path): \(String(decoding: data, as: UTF8.self))")
        }
        return data
    }

    func request(_ path: String, body: Data, token: String?, accept: String?) -> URLRequest {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = "POST"
        request.httpBody = body
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let accept { request.setValue(accept, forHTTPHeaderField: "Accept") }
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        return request
    }

    func login() async throws -> String {
        let answer = try await post("/v2/LoginService/Login", body: Data(#"{"loginString":"User=bench;Password=bench"}"#.utf8))
        guard let object = try JSONSerialization.jsonObject(with: answer) as? [String: Any], let token = object["token"] as? String else {
            throw RelataError(.invalidResponse, "no token")
        }
        return token
    }

    /// A whole table, decoded chunk by chunk as it arrives.
    func fetchTable(_ name: String, token: String) async throws -> DataTable {
        let body = Data(#"{"requests":[{"table":"\#(name)","parameters":{}}]}"#.utf8)
        let receiver = StreamReceiver()
        let session = URLSession(configuration: .ephemeral, delegate: receiver, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        let fetched: Fetched = try await withCheckedThrowingContinuation { continuation in
            receiver.completion = { continuation.resume(with: $0) }
            session.dataTask(with: request("/v2/DataService/GetData", body: body, token: token, accept: RowStream.contentType)).resume()
        }
        return fetched.table
    }

    /// Applies a delta; how many of its changes were resolved, and the answer's bytes. `prefer`
    /// as `return=minimal` asks for the answer without the values sent.
    /// An apply, its request and answer in JSON or (`binary`) in `DeltaBinary`'s form.
    func updateData(_ delta: Delta, token: String, prefer: String? = nil, binary: Bool = false) async throws -> (resolved: Int, answer: Data) {
        let answer = binary
            ? try await post("/v2/DataService/UpdateData", body: DeltaBinary.encode([delta]), token: token, accept: DeltaBinary.contentType,
                             prefer: prefer, contentType: DeltaBinary.contentType)
            : try await post("/v2/DataService/UpdateData", body: DeltaJSON.encode([delta]), token: token, prefer: prefer)
        let deltas = binary ? try DeltaBinary.decode(answer) : try DeltaJSON.decode(answer)
        return (deltas.first?.changes.filter { $0.status == .resolved }.count ?? 0, answer)
    }
}

/// A fetched table on its way from the delegate to the caller.
struct Fetched: @unchecked Sendable {
    // @unchecked Sendable: handed over once, after the delegate stopped touching the table.
    let table: DataTable
}

/// Feeds a GetData answer to the row stream reader as URLSession delivers it.
final class StreamReceiver: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked Sendable: URLSession calls a task's delegate methods one at a time, in order.
    var completion: ((Result<Fetched, any Error>) -> Void)?
    private var tables = RowStreamTables()
    private var failure: (any Error)?

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard failure == nil else { return }
        do { try tables.consume(data) } catch { failure = error }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error = error ?? failure {
            completion?(.failure(error))
        } else if let table = tables.tables.first, (try? tables.finish()) != nil {
            completion?(.success(Fetched(table: table)))
        } else {
            completion?(.failure(RelataError(.invalidResponse, "no table in the answer")))
        }
        completion = nil
    }
}

/// The floor: the same SQLite file read and written in-process with SQLite's C API.
struct SQLiteFile {
    let path: String

    func withDatabase<T>(_ body: (OpaquePointer?) -> T) -> T {
        var db: OpaquePointer?
        sqlite3_open(path, &db)
        defer { sqlite3_close(db) }
        return body(db)
    }

    /// Every client as a Swift struct (dates are stored as ISO 8601 text, as Relata stores them).
    func readClients() -> [ClientRecord] {
        withDatabase { db in
            var statement: OpaquePointer?
            sqlite3_prepare_v2(db, "SELECT Id, Name, City, Balance, Since, Active FROM Clients", -1, &statement, nil)
            defer { sqlite3_finalize(statement) }
            var records: [ClientRecord] = []
            let dates = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
            while sqlite3_step(statement) == SQLITE_ROW {
                let since = String(cString: sqlite3_column_text(statement, 4))
                records.append(ClientRecord(
                    id: sqlite3_column_int64(statement, 0),
                    name: String(cString: sqlite3_column_text(statement, 1)),
                    city: String(cString: sqlite3_column_text(statement, 2)),
                    balance: sqlite3_column_double(statement, 3),
                    since: (try? dates.parse(since)) ?? (try? Date(since, strategy: .iso8601)) ?? .distantPast,
                    active: sqlite3_column_int(statement, 5) != 0))
            }
            return records
        }
    }

    /// The apply's writes in one transaction with a prepared statement.
    func incrementQuantities(_ count: Int) {
        withDatabase { db in
            sqlite3_exec(db, "BEGIN", nil, nil, nil)
            var statement: OpaquePointer?
            sqlite3_prepare_v2(db, "UPDATE Items SET Quantity = Quantity + 1 WHERE ItemId = ?", -1, &statement, nil)
            for id in 1...count {
                sqlite3_bind_int64(statement, 1, Int64(id))
                sqlite3_step(statement)
                sqlite3_reset(statement)
            }
            sqlite3_finalize(statement)
            sqlite3_exec(db, "COMMIT", nil, nil, nil)
        }
    }
}

extension SQLiteFile {
    /// What the database alone does for a checked apply of `count` changes, in one
    /// transaction with SQLite's C API: the touched rows read by key (500 per query, as the
    /// server reads them, for rules to see), then one `UPDATE` per change that finds its row
    /// by key *and* its original values (the conflict check). Returns the rows updated.
    func readAndUpdateComparingOriginals(_ count: Int) -> Int {
        withDatabase { db in
            sqlite3_exec(db, "BEGIN", nil, nil, nil)
            var originals: [(id: Int64, name: String, quantity: Int64, price: Double)] = []
            originals.reserveCapacity(count)
            var select: OpaquePointer?
            let placeholders = Array(repeating: "?", count: 500).joined(separator: ", ")
            sqlite3_prepare_v2(db, "SELECT ItemId, Name, Quantity, UnitPrice FROM Items WHERE ItemId IN (\(placeholders))", -1, &select, nil)
            for start in stride(from: 1, through: count, by: 500) {
                for offset in 0..<500 { sqlite3_bind_int64(select, CInt(offset + 1), Int64(start + offset)) }
                while sqlite3_step(select) == SQLITE_ROW {
                    originals.append((sqlite3_column_int64(select, 0), String(cString: sqlite3_column_text(select, 1)),
                                      sqlite3_column_int64(select, 2), sqlite3_column_double(select, 3)))
                }
                sqlite3_reset(select)
            }
            sqlite3_finalize(select)
            var update: OpaquePointer?
            sqlite3_prepare_v2(db, "UPDATE Items SET Quantity = ? WHERE ItemId = ? AND Name IS ? AND Quantity IS ? AND UnitPrice IS ?", -1, &update, nil)
            let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
            var updated = 0
            for row in originals {
                sqlite3_bind_int64(update, 1, row.quantity + 1)
                sqlite3_bind_int64(update, 2, row.id)
                sqlite3_bind_text(update, 3, row.name, -1, transient)
                sqlite3_bind_int64(update, 4, row.quantity)
                sqlite3_bind_double(update, 5, row.price)
                sqlite3_step(update)
                updated += Int(sqlite3_changes(db))
                sqlite3_reset(update)
            }
            sqlite3_finalize(update)
            sqlite3_exec(db, "COMMIT", nil, nil, nil)
            return updated
        }
    }
}

/// The load generator: wrk, driven by a Lua script.
enum Wrk {
    struct Result {
        var requestsPerSecond = "?"
        var p50 = "?"
        var p99 = "?"
        /// The requests wrk completed.
        var requests = 0
        /// This process's CPU time (the server's, which runs in it) per request completed.
        var cpuPerRequest = "?"
    }

    /// The Lua lines that post one body with a session's headers.
    static func headers(token: String, accept: String) -> String {
        """
        wrk.method = "POST"
        wrk.headers["Content-Type"] = "application/json"
        wrk.headers["Accept"] = "\(accept)"
        wrk.headers["Authorization"] = "Bearer \(token)"
        """
    }

    /// 2 threads and 32 connections for 10 seconds, posting one body.
    static func run(port: Int, path: String, body: String, token: String, accept: String) throws -> Result {
        let escaped = body.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        let script = headers(token: token, accept: accept) + "\nwrk.body = \"\(escaped)\"\n"
        let cpu = processCPUSeconds()
        var result = try start(url: "http://127.0.0.1:\(port)\(path)", script: script, threads: 2, connections: 32, seconds: 10).finish()
        if result.requests > 0 { result.cpuPerRequest = String(format: "%.0f µs", (processCPUSeconds() - cpu) / Double(result.requests) * 1e6) }
        return result
    }

    /// wrk running in the background; ``finish()`` waits for it and reads its report.
    final class Run {
        let process = Process()
        let output = Pipe()
        let script: URL

        init(arguments: [String], script: URL) throws {
            self.script = script
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["wrk"] + arguments
            process.standardOutput = output
            try process.run()
        }

        func finish() -> Result {
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            try? FileManager.default.removeItem(at: script)
            var result = Result()
            for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
                let words = line.split(separator: " ", omittingEmptySubsequences: true)
                if words.first == "Requests/sec:", words.count > 1 { result.requestsPerSecond = String(words[1]) }
                if words.first == "50%", words.count > 1 { result.p50 = String(words[1]) }
                if words.first == "99%", words.count > 1 { result.p99 = String(words[1]) }
                if words.count > 2, words[1] == "requests", words[2] == "in", let count = Int(words[0]) { result.requests = count }
                if line.contains("Non-2xx") || line.contains("Socket errors") { print("wrk: \(line)") }
            }
            return result
        }
    }

    static func start(url: String, script: String, threads: Int, connections: Int, seconds: Int) throws -> Run {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("relata-wrk-\(UUID().uuidString).lua")
        try script.write(to: file, atomically: true, encoding: .utf8)
        return try Run(arguments: ["-t\(threads)", "-c\(connections)", "-d\(seconds)s", "--latency", "-s", file.path, url], script: file)
    }
}

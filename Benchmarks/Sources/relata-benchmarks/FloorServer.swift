// The floor of a small request: what any server answering it must do, on the same framework and
// the same SQLite file — and nothing more.
import CBenchmarkSupport
import Foundation
import Hummingbird
import Relata

/// A Hummingbird server that answers the requests benchmark's two small requests as cheaply as a
/// server can while doing their work: it reads the body, decodes its JSON, runs the statement on
/// a thread of the database's own (never on the cooperative pool, whose few threads one slow
/// statement would hold — GRDB does the same), and answers the bytes Relata answered. It checks no
/// session or permission, runs no rule, writes no log line and counts no metric.
///
/// - GetData: the request decoded with `JSONDecoder`; the client read by key on one of four
///   reader connections (its statement prepared once) into Swift values.
/// - UpdateData: the delta parsed with `JSONSerialization`; the note's text inserted in a
///   transaction of its own on the one writer connection.
func floorServer(path: String, getDataAnswer: Data, applyAnswer: Data) -> some ApplicationProtocol {
    let readers = (0..<4).map { SQLiteLane(path: path, label: "floor.reader.\($0)") }
    let writer = SQLiteLane(path: path, label: "floor.writer")
    let turns = TurnCounter()
    let readAnswer = ByteBuffer(bytes: getDataAnswer), writeAnswer = ByteBuffer(bytes: applyAnswer)
    let router = Router()
    router.post("v2/DataService/GetData") { request, _ -> Response in
        let body = try await request.body.collect(upTo: 1 << 20)
        let message = try JSONDecoder().decode(FloorGetData.self, from: Data(body.readableBytesView))
        guard let id = message.requests.first?.parameters?["id"]?.integer else { throw HTTPError(.badRequest) }
        let found = await readers[turns.next() % readers.count].run { $0.client(id: id) }
        guard found != nil else { throw HTTPError(.notFound) }
        return Response(status: .ok, headers: [.contentType: RowStream.contentType], body: ResponseBody(byteBuffer: readAnswer))
    }
    router.post("v2/DataService/UpdateData") { request, _ -> Response in
        let body = try await request.body.collect(upTo: 1 << 20)
        guard let text = firstText(in: try JSONSerialization.jsonObject(with: Data(body.readableBytesView))) else { throw HTTPError(.badRequest) }
        guard await writer.run({ $0.insertNote(text) }) else { throw HTTPError(.internalServerError) }
        return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: ResponseBody(byteBuffer: writeAnswer))
    }
    return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                       onServerRunning: { await PortBox.report($0.localAddress?.port ?? 0) }, logger: quietLogger)
}

/// `{"requests":[{"table":…,"where":…,"parameters":{"id":{"integer":4242}}}]}`
private struct FloorGetData: Decodable {
    struct Request: Decodable {
        var table: String
        var `where`: String?
        var parameters: [String: Parameter]?
    }
    struct Parameter: Decodable {
        var integer: Int64?
    }
    var requests: [Request]
}

/// The first `Text` member's string in a parsed JSON value (the new note's text in the delta,
/// `"Text": {"string": "…"}`).
private func firstText(in json: Any) -> String? {
    if let object = json as? [String: Any] {
        if let text = (object["Text"] as? [String: Any])?["string"] as? String { return text }
        return object.values.lazy.compactMap(firstText(in:)).first
    }
    if let array = json as? [Any] { return array.lazy.compactMap(firstText(in:)).first }
    return nil
}

/// Hands out turns in order, from any thread.
private final class TurnCounter: @unchecked Sendable {
    // @unchecked Sendable: `count` is read and written only while `lock` is held.
    private let lock = NSLock()
    private var count = 0

    func next() -> Int { lock.withLock { count += 1; return count } }
}

/// One SQLite connection and the serial queue it is used on, as GRDB keeps each of its connections.
private final class SQLiteLane: @unchecked Sendable {
    // @unchecked Sendable: `db` and `statements` are used only on `queue`.
    private let queue: DispatchQueue
    private var db: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]

    init(path: String, label: String) {
        queue = DispatchQueue(label: label)
        queue.sync {
            sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
            sqlite3_busy_timeout(db, 10_000)
        }
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close(db)
    }

    /// Runs `work` on the lane's queue; the caller's task waits without holding a thread.
    func run<Result: Sendable>(_ work: @escaping @Sendable (SQLiteLane) -> Result) async -> Result {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: work(self)) }
        }
    }

    /// A statement prepared once for the connection, reset for its next use.
    private func prepared(_ sql: String) -> OpaquePointer? {
        if let statement = statements[sql] {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
            return statement
        }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else { return nil }
        statements[sql] = statement
        return statement
    }

    private static let dates = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// The client with this id, its values read as Swift values.
    func client(id: Int64) -> ClientRecord? {
        guard let statement = prepared("SELECT Id, Name, City, Balance, Since, Active FROM Clients WHERE Id = ?") else { return nil }
        sqlite3_bind_int64(statement, 1, id)
        guard sqlite3_step(statement) == SQLITE_ROW else { return nil }
        return ClientRecord(id: sqlite3_column_int64(statement, 0), name: String(cString: sqlite3_column_text(statement, 1)),
                            city: String(cString: sqlite3_column_text(statement, 2)), balance: sqlite3_column_double(statement, 3),
                            since: (try? Self.dates.parse(String(cString: sqlite3_column_text(statement, 4)))) ?? .distantPast,
                            active: sqlite3_column_int(statement, 5) != 0)
    }

    /// Stores a new note in a transaction of its own; whether it was stored.
    func insertNote(_ text: String) -> Bool {
        guard sqlite3_exec(db, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK else { return false }
        guard let insert = prepared("INSERT INTO Notes (Text) VALUES (?)") else {
            sqlite3_exec(db, "ROLLBACK", nil, nil, nil)
            return false
        }
        sqlite3_bind_text(insert, 1, text, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
        let stored = sqlite3_step(insert) == SQLITE_DONE
        return sqlite3_exec(db, stored ? "COMMIT" : "ROLLBACK", nil, nil, nil) == SQLITE_OK && stored
    }
}

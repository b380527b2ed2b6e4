import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Hummingbird
import Logging
import RelataTestSupport
@testable import RelataServer

/// A server on a free loopback port for the length of a test, reached with URLSession
/// like any client would; stopped (gracefully) when the body returns.
struct LiveClient: Sendable {
    let port: Int
    /// The client's own connections: a session shared by every test could reuse a connection to
    /// an earlier test's server that had this port, and get an empty answer from it as it closes.
    let session: URLSession

    struct Response: Sendable {
        let status: Int
        let body: Data
        /// A header of the answer (case-insensitively).
        let header: @Sendable (String) -> String?
    }

    /// Sends a request through the client's session, or `session` (a flood of requests sent
    /// through another one does not hold this one's requests in the client's own queue).
    func request(_ path: String, method: String = "POST", body: Data? = nil, token: String? = nil, accept: String? = nil,
                 headers: [String: String] = [:], session: URLSession? = nil) async throws -> Response {
        let session = session ?? self.session
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        request.httpBody = body
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let accept { request.setValue(accept, forHTTPHeaderField: "Accept") }
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await session.data(for: request)
        let http = response as? HTTPURLResponse
        let headers = (http?.allHeaderFields ?? [:]).reduce(into: [String: String]()) { result, entry in
            result["\(entry.key)".lowercased()] = "\(entry.value)"
        }
        return Response(status: http?.statusCode ?? 0, body: data, header: { headers[$0.lowercased()] })
    }
}

func withLiveServer(_ services: ServerServices, maxBodyBytes: Int = 1 << 20,
                    _ body: @Sendable (LiveClient) async throws -> Void) async throws {
    // Reads and commands take bodies no larger than the changes' limit, as small as the test set it.
    try await withLiveServer(services, configuration: ServerConfiguration(port: 0, maxBodyBytes: maxBodyBytes, maxQueryBodyBytes: min(maxBodyBytes, 1 << 20)), body)
}

func withLiveServer(_ services: ServerServices, configuration: ServerConfiguration, metrics: ServerMetrics = ServerMetrics(),
                    logger: Logger = Logger(label: "relata.server"), _ body: @Sendable (LiveClient) async throws -> Void) async throws {
    let (ports, continuation) = AsyncStream<Int>.makeStream()
    let app = RelataHTTPServer.application(services: services, configuration: configuration, metrics: metrics, logger: logger) { port in
        continuation.yield(port)
    }
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await app.runService(gracefulShutdownSignals: []) }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw CancellationError() }
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        do {
            try await body(LiveClient(port: port, session: session))
        } catch {
            group.cancelAll()
            throw error
        }
        group.cancelAll()
    }
}

extension LogRecorder {
    /// How many logged messages hold `text`.
    func count(of text: String) -> Int { messages.filter { $0.contains(text) }.count }

    /// Waits (polling) until `count` logged messages hold `text`, for at most `limit`.
    func waitFor(count: Int = 1, of text: String, within limit: Duration) async -> Bool {
        await eventually(within: limit) { self.count(of: text) >= count }
    }
}

/// Waits (polling every 50 ms) until `condition` holds, for at most `limit`; whether it held.
func eventually(within limit: Duration, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(50))
    }
    return condition()
}

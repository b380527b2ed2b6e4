import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Hummingbird
@testable import RelataServer

/// A server on a free loopback port for the length of a test, reached with URLSession
/// like any client would; stopped (gracefully) when the body returns.
struct LiveClient: Sendable {
    let port: Int

    struct Response: Sendable {
        let status: Int
        let body: Data
    }

    func request(_ path: String, method: String = "POST", body: Data? = nil, token: String? = nil) async throws -> Response {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        request.httpBody = body
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let (data, response) = try await URLSession.shared.data(for: request)
        return Response(status: (response as? HTTPURLResponse)?.statusCode ?? 0, body: data)
    }
}

func withLiveServer(_ services: ServerServices, maxBodyBytes: Int = 1 << 20,
                    _ body: @Sendable (LiveClient) async throws -> Void) async throws {
    let (ports, continuation) = AsyncStream<Int>.makeStream()
    let app = RelataHTTPServer.application(services: services, configuration: ServerConfiguration(port: 0, maxBodyBytes: maxBodyBytes)) { port in
        continuation.yield(port)
    }
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await app.runService(gracefulShutdownSignals: []) }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw CancellationError() }
        do {
            try await body(LiveClient(port: port))
        } catch {
            group.cancelAll()
            throw error
        }
        group.cancelAll()
    }
}

import Foundation
import Hummingbird
import Logging
import Relata

/// Every answer carries the request's id (`X-Request-Id`, as the log names it), and every error a
/// route or a middleware throws becomes the protocol's JSON error answer with its status: nothing
/// reaches a client as a bare 500.
struct ProtocolErrorMiddleware: RouterMiddleware {
    typealias Context = RelataRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            response = ProtocolError.notFound("no such path: \(request.uri.path) (POST /v\(RelataHTTPServer.protocolVersion)/{service}/{method})")
                .response(logger: context.logger, record: context.record)
        } catch {
            response = ProtocolErrorAnswer.response(for: error, logger: context.logger, record: context.record)
        }
        response.headers[.init("x-request-id")!] = context.id
        return response
    }
}

/// Gives each request its share of the server's budget for request bodies (``BodyBudget``) for as
/// long as it runs.
struct BodyBudgetMiddleware: RouterMiddleware {
    typealias Context = RelataRequestContext
    let budget: BodyBudget

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        try await budget.withLease { lease in
            var context = context
            context.bodyLease = lease
            return try await next(request, context)
        }
    }
}

/// The one door to a data service: the bearer token must name a live session of a domain the
/// server serves, or the request is answered 401 before its body is read.
struct SessionMiddleware: RouterMiddleware {
    typealias Context = RelataRequestContext
    let services: ServerServices

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let sessions = services.sessions
        guard let token = Self.bearerToken(request), let session = try await Self.session(for: token, in: sessions) else {
            throw ProtocolError.noSession
        }
        guard let domain = try? services.domain(named: session.values["Domain"]?.stringValue) else {
            throw ProtocolError.sessionNotFound("the session's domain is no longer served: log in again")
        }
        var context = context
        context.authenticated = (session, domain)
        let user = session.values["User"]?.stringValue
        context.record.note { facts in
            facts.user = user
            facts.domain = domain.name
        }
        // Every line the request logs names who made it. Set in one change: a log handler may
        // render its metadata at each (swift-log's `StreamLogHandler` does).
        var metadata = context.logger.handler.metadata
        metadata["user"] = user.map { .string($0) }
        metadata["domain"] = .string(domain.name)
        context.logger.handler.metadata = metadata
        return try await next(request, context)
    }

    /// A session held in memory is answered at once; one that needs the database, off the cooperative pool.
    private static func session(for token: String, in sessions: SessionStore) async throws -> Session? {
        if let held = sessions.cachedSession(for: token) { return held }
        return try await OffCooperativePool.run { try sessions.session(for: token) }
    }

    /// The token of an `Authorization: Bearer …` header, without the spaces and tabs around it
    /// (HTTP's whitespace; trimmed byte by byte: Foundation's trimming cost more than the rest of
    /// reading the header).
    static func bearerToken(_ request: Request) -> String? {
        guard let value = request.headers[.authorization], value.hasPrefix("Bearer ") else { return nil }
        let bytes = value.utf8.dropFirst("Bearer ".utf8.count)
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = bytes.firstIndex(where: { !isBlank($0) }), let last = bytes.lastIndex(where: { !isBlank($0) }) else { return "" }
        return String(Substring(value.utf8[first...last]))
    }
}

import Foundation
import Hummingbird
import Relata

/// Answers browsers' preflight requests and marks every answer a page of an allowed origin may
/// read (``CORSPolicy``). It wraps the error middleware, so a refusal's JSON is readable too.
///
/// A preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) from an origin the
/// policy does not name is answered 403 in the protocol's words, naming the origin and the
/// setting; any other request goes on as it would without CORS, and its answer carries no
/// `Access-Control-Allow-Origin`, so the browser keeps it from the page.
struct CORSMiddleware: RouterMiddleware {
    typealias Context = RelataRequestContext
    let policy: CORSPolicy

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let origin = request.headers[.origin] else { return try await next(request, context) }
        let allowed = policy.allows(origin: origin)
        if request.method == .options, let method = request.headers[.accessControlRequestMethod] {
            return preflight(origin: origin, method: method, allowed: allowed, context: context)
        }
        var response = try await next(request, context)
        Self.addVaryOrigin(to: &response)
        if allowed {
            response.headers[.accessControlAllowOrigin] = origin
            response.headers[.accessControlExposeHeaders] = CORSPolicy.exposedHeaders
        }
        return response
    }

    private func preflight(origin: String, method: String, allowed: Bool, context: Context) -> Response {
        var response: Response
        if !allowed {
            let shown = origin.count > 200 ? String(origin.prefix(200)) + "…" : origin
            response = ProtocolErrorAnswer.response(
                for: RelataError(.permissionDenied, "pages of \(shown) may not call this server: its cors.allowOrigins does not name that origin (Documentation/Server.md, CORS)"),
                logger: context.logger, record: context.record)
        } else if method != "GET" && method != "POST" && method != "HEAD" {
            response = ProtocolErrorAnswer.response(
                for: RelataError(.permissionDenied, "this server answers GET and POST, not \(method.prefix(40))"), logger: context.logger, record: context.record)
        } else {
            response = Response(status: .noContent)
            response.headers[.accessControlAllowOrigin] = origin
            response.headers[.accessControlAllowMethods] = CORSPolicy.allowedMethods
            response.headers[.accessControlAllowHeaders] = CORSPolicy.allowedHeaders
            response.headers[.accessControlMaxAge] = String(CORSPolicy.maxAgeSeconds)
        }
        Self.addVaryOrigin(to: &response)
        response.headers[.init("x-request-id")!] = context.id
        return response
    }

    /// The answer varies by the page's origin, beside what the route said it varies by (`Prefer`).
    private static func addVaryOrigin(to response: inout Response) {
        response.headers[.vary] = response.headers[.vary].map { "\($0), Origin" } ?? "Origin"
    }
}

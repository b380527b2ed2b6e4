import Foundation
import Hummingbird
import Logging

/// The outermost middleware: once a request has its answer, one log line says what it was, how
/// it ended and how long it took — method, path, status, duration, user, domain, rows read and
/// changed, error code, and the request id every line of the request carries (`hb.request.id`,
/// also the answer's `X-Request-Id`) — and the server's metrics count it.
///
/// An answer made whole is logged as it is returned: Hummingbird writes its head, body and end
/// in one write, which wrapping its body to see the last byte would turn into three. A streamed
/// answer (``RequestRecord/Facts/answerStreams``) is logged once its last byte is written, or
/// it is cut short.
///
/// Health checks and metric scrapes are logged at `debug`: a probe every second would drown the rest.
/// What the request refused goes to ``RecentRefusals``.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = RelataRequestContext
    let metrics: ServerMetrics
    let refusals: RecentRefusals

    /// The methods the protocol has; any other name is counted as `other`.
    static let methods: Set<String> = ["Login", "Logout", "GetSchema", "GetData", "SQLGetData", "UpdateData", "ExecuteCommand", "Overview"]
    /// The paths outside the protocol the server answers.
    static let plainPaths: Set<String> = ["/health", "/health/live", "/health/ready", "/metrics", "/openapi.json"]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        var response = try await next(request, context)
        let end = RequestEnd(method: request.method.rawValue, path: request.uri.path, status: response.status.code,
                             start: start, record: context.record, logger: context.logger, metrics: metrics,
                             refusals: refusals, requestId: context.id)
        guard context.record.answerStreams else {
            end.log(cutShort: false)
            return response
        }
        let body = response.body
        response.body = ResponseBody(contentLength: body.contentLength) { writer in
            do {
                try await body.write(writer)
                end.log(cutShort: false)
            } catch {
                end.log(cutShort: true)
                throw error
            }
        }
        return response
    }
}

/// What the log line and the metrics of one request need once its answer is written.
private struct RequestEnd: Sendable {
    let method: String
    let path: String
    let status: Int
    let start: ContinuousClock.Instant
    let record: RequestRecord
    let logger: Logger
    let metrics: ServerMetrics
    let refusals: RecentRefusals
    let requestId: String

    func log(cutShort: Bool) {
        let duration = ContinuousClock.now - start
        let facts = record.facts
        let (service, method) = labels(facts)
        metrics.requestEnded(service: service, method: method, status: status, duration: duration, facts: facts)
        refusals.add(facts.refusals.map { refusal in
            var refusal = refusal
            (refusal.user, refusal.domain, refusal.service, refusal.requestId) = (facts.user, facts.domain, facts.service, requestId)
            return refusal
        })
        let level: Logger.Level = service == "http" && method != "other" ? .debug : .info
        guard logger.logLevel <= level else { return }
        var metadata: Logger.Metadata = [
            "status": .stringConvertible(status),
            "duration_ms": .stringConvertible((duration.seconds * 10_000).rounded() / 10),
        ]
        if let user = facts.user { metadata["user"] = .string(user) }
        if let domain = facts.domain { metadata["domain"] = .string(domain) }
        if facts.rowsRead > 0 { metadata["rows_read"] = .stringConvertible(facts.rowsRead) }
        if facts.rowsChanged > 0 { metadata["rows_changed"] = .stringConvertible(facts.rowsChanged) }
        if let code = facts.errorCode { metadata["error"] = .string(code) }
        if cutShort { metadata["answer"] = "cut short" }
        let shownPath = path.count > 200 ? String(path.prefix(200)) + "…" : path
        logger.log(level: level, "\(self.method) \(shownPath) \(status)", metadata: metadata)
    }

    /// The metrics' labels: only names the server serves, so no client can add label values.
    private func labels(_ facts: RequestRecord.Facts) -> (service: String, method: String) {
        if let service = facts.service {
            let method = path.split(separator: "/").last.map(String.init) ?? ""
            return (service, RequestLogMiddleware.methods.contains(method) ? method : "other")
        }
        return ("http", RequestLogMiddleware.plainPaths.contains(path) ? String(path.dropFirst()) : "other")
    }
}

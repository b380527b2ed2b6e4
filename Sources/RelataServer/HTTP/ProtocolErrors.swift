import Foundation
import Hummingbird
import Logging
import Relata
import RelataScript

/// The protocol's error answers: `{"error": {"code", "message", …}}` with the HTTP status that
/// fits the error.
enum ProtocolErrorAnswer {
    /// Every error as a JSON answer with the right status; nothing reaches the client as a bare 500.
    static func response(for error: any Error, logger: Logger, record: RequestRecord) -> Response {
        // Lines about the error name the request's user, known only to the handlers inside.
        var logger = logger
        let facts = record.facts
        if let user = facts.user { logger[metadataKey: "user"] = .string(user) }
        if let domain = facts.domain { logger[metadataKey: "domain"] = .string(domain) }
        let (status, answer, retryAfter) = self.answer(for: error, logger: logger)
        record.note { $0.errorCode = answer.error.code }
        if let refusal = RecentRefusals.Refusal(refusing: error, code: answer.error.code) { record.noteRefusal(refusal) }
        var response = (try? RelataHTTPServer.json(answer, status: status)) ?? Response(status: .internalServerError)
        if let retryAfter { response.headers[.retryAfter] = String(retryAfter) }
        // A body that never arrived leaves the connection in no state to read another request.
        if status == .requestTimeout { response.headers[.connection] = "close" }
        return response
    }

    /// The protocol's error answer for an error, its HTTP status, and for a refusal that may
    /// succeed later, the seconds to wait (`Retry-After`).
    static func answer(for error: any Error, logger: Logger) -> (HTTPResponse.Status, ProtocolMessages.ErrorAnswer, retryAfter: Int?) {
        let status: HTTPResponse.Status
        let details: ProtocolMessages.ErrorAnswer.Details
        var retryAfter: Int?
        switch error {
        case let error as ProtocolError:
            status = error.status
            details = .init(code: error.code, message: error.message)
            if case .busy(_, let seconds) = error { retryAfter = seconds }
        case let error as LoginService.LockedOut:
            status = .tooManyRequests
            details = .init(code: "lockedOut", message: "too many failed logins for this user; try again in \(error.retryAfter) s")
            retryAfter = error.retryAfter
        case let error as WorkLimit.Exceeded:
            status = .badRequest
            details = .init(code: RelataError.Code.timeLimitExceeded.rawValue,
                            message: "computing the answer ran longer than \(error.timeLimit) and was stopped; narrow the request")
        case let error as SQLError where error.kind == .unavailable || error.kind == .serializationFailure:
            status = .serviceUnavailable
            details = .init(code: "unavailable", message: "the database cannot take the request now: \(error.message)")
            retryAfter = 1
            logger.warning("database unavailable: \(error.message)")
        case let error as RelataError where error.code == .permissionDenied:
            status = .forbidden
            details = .init(code: error.code.rawValue, message: error.message, table: error.table)
            logger.audit(.permissionDenied, "\(error.message)", metadata: error.table.map { ["table": .string($0)] } ?? [:])
        case let error as RelataError where [.staleRules, .applyIdReused, .applyIdExpired].contains(error.code):
            status = .conflict
            details = .init(code: error.code.rawValue, message: error.message)
        case let error as RelataError:
            status = .badRequest
            details = .init(code: error.code.rawValue, message: error.message, table: error.table, field: error.field, location: error.location)
        case let error as ScriptError where error.kind == .ruleFailed:
            status = .forbidden
            details = .init(code: "refused", message: error.message, table: error.table, location: error.location, event: error.event)
        case let error as ScriptError:
            status = .internalServerError
            details = .init(code: "ruleError", message: error.message, table: error.table, location: error.location, event: error.event)
            logger.error("a rule is broken: \(error)")
        default:
            // The detail stays in the log: an internal error's text can name files, tables and the server's setup.
            let request = logger[metadataKey: "hb.request.id"].map { "\($0)" } ?? "unknown"
            status = .internalServerError
            details = .init(code: "internal", message: "internal error; the server's log has the detail under request id \(request)")
            logger.error("request failed: \(error)")
        }
        return (status, ProtocolMessages.ErrorAnswer(error: details), retryAfter)
    }
}

/// A request the protocol itself refuses, with its HTTP status.
enum ProtocolError: Error {
    case badRequest(String), loginFailed(String), sessionNotFound(String), notFound(String), tooLarge(String)
    case timedOut(String)

    /// A request without a live session (``SessionMiddleware`` and the routes behind it).
    static let noSession = ProtocolError.sessionNotFound(
        "no session: log in (LoginService/Login) and send the token as 'Authorization: Bearer …'; a session ends after a logout or when it expires")

    /// A request of a protocol version this server no longer speaks.
    case oldProtocol(String)
    /// The server is too busy for the request now; the client may retry after `retryAfter` seconds.
    case busy(String, retryAfter: Int)

    var status: HTTPResponse.Status {
        switch self {
        case .badRequest: return .badRequest
        case .loginFailed, .sessionNotFound: return .unauthorized
        case .notFound: return .notFound
        case .tooLarge: return .contentTooLarge
        case .timedOut: return .requestTimeout
        case .busy: return .serviceUnavailable
        case .oldProtocol: return .gone
        }
    }

    var code: String {
        switch self {
        case .badRequest: return "badRequest"
        case .loginFailed: return "loginFailed"
        case .sessionNotFound: return "sessionNotFound"
        case .notFound: return "notFound"
        case .tooLarge: return "tooLarge"
        case .timedOut: return "timedOut"
        case .busy: return "busy"
        case .oldProtocol: return "unsupportedProtocol"
        }
    }

    var message: String {
        switch self {
        case .badRequest(let text), .loginFailed(let text), .sessionNotFound(let text), .notFound(let text), .tooLarge(let text),
             .timedOut(let text), .busy(let text, _), .oldProtocol(let text): return text
        }
    }

    /// A decoding error as a person reads it: where in the JSON, and what was wrong.
    static func describe(_ error: DecodingError) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            codingPath.isEmpty ? "the body" : codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        }
        switch error {
        case .dataCorrupted(let context): return "\(path(context.codingPath)): \(context.debugDescription)"
        case .keyNotFound(let key, let context): return "\(path(context.codingPath)): '\(key.stringValue)' is missing"
        case .typeMismatch(let type, let context): return "\(path(context.codingPath)): expected \(type)"
        case .valueNotFound(let type, let context): return "\(path(context.codingPath)): expected \(type), found null"
        @unknown default: return "\(error)"
        }
    }
}

extension ProtocolError {
    /// The error as the protocol's answer.
    func response(logger: Logger, record: RequestRecord) -> Response {
        ProtocolErrorAnswer.response(for: self, logger: logger, record: record)
    }
}

import Foundation
import Relata

/// What went wrong talking to a data server, classified by what to do about it.
///
/// ```swift
/// do {
///     try await adapter.applyChanges(for: orders)
/// } catch let error as RemoteError where error.kind == .transient {
///     showRetryButton(error.message)          // every change is still pending
/// }
/// ```
public struct RemoteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What to do about a failure.
    public enum Kind: String, Sendable, Hashable {
        /// The network or the server failed (unreachable, connection broken, answer cut
        /// short, a 5xx): nothing was changed on this side; retrying may succeed.
        case transient
        /// The server refused the request (a rule, a conflict, a permission, a bad request):
        /// retrying the same request gives the same answer.
        case permanent
        /// Logging in failed or was not possible (no credentials, refused too often).
        case authentication
    }

    /// What to do about it.
    public var kind: Kind
    /// The protocol's stable error code (`sessionNotFound`, `permissionDenied`, `refused`, …),
    /// or ``networkCode`` / ``invalidResponseCode`` for failures below the protocol.
    public var code: String
    /// What happened, in words.
    public var message: String
    /// The HTTP status, when the server answered.
    public var status: Int?
    /// The table, field, script location and rule event the server named, if any.
    public var table: String?
    public var field: String?
    public var location: String?
    public var event: String?

    /// The code of a failure to reach the server or to finish reading its answer.
    public static let networkCode = "network"
    /// The code of an answer this client cannot read.
    public static let invalidResponseCode = "invalidResponse"
    /// The server's code for a missing or ended session: the adapter logs in again.
    public static let sessionNotFoundCode = "sessionNotFound"
    /// The server's code for changes validated with rules it no longer has: the adapter takes the new ones.
    public static let staleRulesCode = "staleRules"
    /// The server's tables changed shape since this adapter downloaded them: a new adapter is needed.
    public static let schemaChangedCode = "schemaChanged"

    /// True for ``Kind/transient`` failures.
    public var isRetryable: Bool { kind == .transient }

    public init(kind: Kind, code: String, message: String, status: Int? = nil, table: String? = nil,
                field: String? = nil, location: String? = nil, event: String? = nil) {
        self.kind = kind
        self.code = code
        self.message = message
        self.status = status
        self.table = table
        self.field = field
        self.location = location
        self.event = event
    }

    public var description: String {
        var text = "\(code): \(message)"
        if let location { text += " (\(location))" } else if let table { text += " (\(table)\(field.map { ".\($0)" } ?? ""))" }
        if kind == .transient { text += "; retry" }
        return text
    }

    /// The error a server's error answer describes: the protocol's JSON shape with its status.
    init(status: Int, body: Data) {
        guard let answer = try? JSONDecoder().decode(ProtocolMessages.ErrorAnswer.self, from: body) else {
            let text = String(decoding: body.prefix(200), as: UTF8.self)
            self.init(kind: status >= 500 ? .transient : .permanent, code: status >= 500 ? "serverError" : Self.invalidResponseCode,
                      message: "the server answered HTTP \(status)\(text.isEmpty ? "" : ": \(text)")", status: status)
            return
        }
        self.init(errorAnswer: answer.error, status: status)
    }

    init(errorAnswer details: ProtocolMessages.ErrorAnswer.Details, status: Int?) {
        let kind: Kind
        switch (details.code, status ?? 0) {
        case (Self.sessionNotFoundCode, _), ("loginFailed", _): kind = .authentication
        case ("ruleError", _), ("notSupported", _): kind = .permanent
        case (Self.staleRulesCode, _): kind = .transient
        case (_, 500...): kind = .transient
        default: kind = .permanent
        }
        self.init(kind: kind, code: details.code, message: details.message, status: status, table: details.table,
                  field: details.field, location: details.location, event: details.event)
    }

    /// An answer that does not follow the protocol (a damaged row stream, JSON of the wrong shape).
    static func invalidResponse(_ what: String, _ error: any Error) -> RemoteError {
        RemoteError(kind: .transient, code: invalidResponseCode, message: "the server's answer to \(what) cannot be read: \(error)")
    }
}

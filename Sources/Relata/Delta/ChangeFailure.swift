/// Why a change failed, as structured data that survives the wire: what kind of
/// failure, the message, and — when a rule failed it — the event, the script
/// location and the row.
///
/// Every data source fills it in the same way, so a client shows a server's
/// refusal exactly as it shows its own.
///
/// ```swift
/// for change in delta.failedChanges {
///     guard let failure = change.failure else { continue }
///     print(failure.location ?? "-", failure.kind, failure.message)   // OrderDetails.js:4:9 refusal Quantity must be positive
/// }
/// ```
public struct ChangeFailure: Sendable, Hashable, Codable, CustomStringConvertible {
    /// A refusal, a broken rule, a bad value, a broken key or a store error.
    public var kind: FailureKind
    /// The message alone: the text given to `fail(…)`, or the error's own message.
    public var message: String
    /// The rule event that was running (`beforeProcessDeltaChange`, `beforeCommit`, …).
    public var event: String?
    /// The table whose rules (or constraint) failed the change; it can be another table
    /// than the delta's when a rule wrote to it through `lda`.
    public var table: String?
    /// The row involved, described by its key (`row (ClientId=3)`).
    public var row: String?
    /// The script file the failure happened in.
    public var file: String?
    /// The line in the script, counting from 1.
    public var line: Int?
    /// The column in the line, counting from 1.
    public var column: Int?

    /// Creates a failure.
    ///
    /// ```swift
    /// ChangeFailure(.refusal, "Quantity must be positive", event: "beforeProcessDeltaChange",
    ///               file: "OrderDetails.js", line: 4, column: 9)
    /// ```
    public init(_ kind: FailureKind, _ message: String, event: String? = nil, table: String? = nil, row: String? = nil,
                file: String? = nil, line: Int? = nil, column: Int? = nil) {
        self.kind = kind
        self.message = message
        self.event = event
        self.table = table
        self.row = row
        self.file = file
        self.line = line
        self.column = column
    }

    /// `file:line:column`, as far as it is known.
    public var location: String? { RuleFailureText.location(file: file, line: line, column: column) }

    /// The message, prefixed with where it happened: `OrderDetails.js:4:9: beforeProcessDeltaChange on OrderDetails: …`.
    public var description: String {
        RuleFailureText.describe(message, location: location, event: event, table: table, row: row)
    }
}

extension ChangeFailure {
    /// The failure for a ``RelataError``: a ``FailureKind/constraint`` for a broken key,
    /// else ``FailureKind/invalidValue``; the message is the error's full description.
    ///
    /// ```swift
    /// change.fail(ChangeFailure(error))
    /// ```
    public init(_ error: RelataError) {
        self.init(error.code == .constraintViolation ? .constraint : .invalidValue, error.description)
    }
}

/// How a rule's failure reads, wherever it is reported (a ``ChangeFailure``, a `ScriptError`).
package enum RuleFailureText {
    /// `file:line:column`, as far as it is known.
    package static func location(file: String?, line: Int?, column: Int?) -> String? {
        guard let file else { return nil }
        return [file, line.map(String.init), column.map(String.init)].compactMap { $0 }.joined(separator: ":")
    }

    /// `Clients.js:12:5: beforePost on Clients, row (ClientId=3): the message`.
    package static func describe(_ message: String, location: String?, event: String?, table: String?, row: String?) -> String {
        var context: [String] = []
        if let event { context.append(table.map { "\(event) on \($0)" } ?? event) } else if let table { context.append(table) }
        if let row { context.append(row) }
        let prefix = [location, context.isEmpty ? nil : context.joined(separator: ", ")].compactMap { $0 }
        return prefix.isEmpty ? message : prefix.joined(separator: ": ") + ": " + message
    }
}

/// A ``ChangeFailure`` held by reference in a ``DeltaChange``; never changed once made.
/// Compared, hashed and coded as the failure it holds.
final class FailureBox: Sendable, Hashable, Codable {
    let failure: ChangeFailure

    init(_ failure: ChangeFailure) {
        self.failure = failure
    }

    init(from decoder: any Decoder) throws {
        failure = try ChangeFailure(from: decoder)
    }

    func encode(to encoder: any Encoder) throws {
        try failure.encode(to: encoder)
    }

    static func == (left: FailureBox, right: FailureBox) -> Bool { left.failure == right.failure }

    func hash(into hasher: inout Hasher) { hasher.combine(failure) }
}

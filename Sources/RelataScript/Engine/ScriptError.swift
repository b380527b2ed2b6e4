import Relata

/// An error from a JavaScript script: a syntax error, an uncaught exception, a
/// script stopped by the CPU time limit, or a rule's `fail(message)`.
///
/// It carries the script location (file, line, column) and the JavaScript
/// stack, and, for rules, the event, table and row involved.
///
/// ```swift
/// do {
///     try engine.evaluate("let x = ;", fileName: "broken.js")
/// } catch let error as ScriptError {
///     print(error)   // broken.js:1: SyntaxError: Unexpected token ';'
/// }
/// ```
public struct ScriptError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of error this is.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// The script does not parse.
        case syntax
        /// The script threw (or a host function it called failed).
        case runtime
        /// The script ran longer than the CPU time limit and was stopped.
        case timeLimitExceeded
        /// A rule called `fail(message)`.
        case ruleFailed
    }

    /// What kind of error this is.
    public var kind: Kind
    /// The message: the exception's message, or the text given to `fail`.
    public var message: String
    /// The script file (the name it was loaded under).
    public var file: String?
    /// The line in the script, counting from 1.
    public var line: Int?
    /// The column in the line, counting from 1 (syntax errors carry none).
    public var column: Int?
    /// The JavaScript stack at the point of the error, innermost call first.
    public var stack: String?
    /// The rule event that was running (`beforePost`, `beforeProcessDeltaChange`, …).
    public var event: String?
    /// The table whose rules were running.
    public var table: String?
    /// The row involved, described by its key (`row (ClientId=3)`).
    public var row: String?

    /// Creates an error.
    ///
    /// ```swift
    /// ScriptError(.ruleFailed, "Quantity must be positive", file: "OrderDetails.js", line: 4, column: 9)
    /// ```
    public init(_ kind: Kind, _ message: String, file: String? = nil, line: Int? = nil, column: Int? = nil,
                stack: String? = nil, event: String? = nil, table: String? = nil, row: String? = nil) {
        self.kind = kind
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        self.stack = stack
        self.event = event
        self.table = table
        self.row = row
    }

    /// `file:line:column`, as far as it is known.
    public var location: String? { RuleFailureText.location(file: file, line: line, column: column) }

    /// `Clients.js:12:5: beforePost on Clients, row (ClientId=3): the message`.
    public var description: String {
        RuleFailureText.describe(message, location: location, event: event, table: table, row: row)
    }
}

import Relata
import RelataScript

/// The outcome of one rule test.
public struct RuleTestResult: Codable, Sendable, Equatable {
    /// The test file, as named to the runner.
    public var file: String
    public var test: String
    /// The line of the `test(…)` call.
    public var line: Int
    public var passed: Bool
    /// Why the test failed (nil when it passed): a failed expectation, an unexpected refusal,
    /// a broken rule, or an error in the test file itself.
    public var kind: FailureKind?
    /// Why the test failed: the expectation, or the unexpected error with its script location.
    public var message: String?
    /// Where in the test file it failed (`tests/Orders.test.js:14:5`).
    public var location: String?
    public var milliseconds: Double

    public init(file: String, test: String, line: Int, passed: Bool, kind: FailureKind? = nil, message: String? = nil,
                location: String? = nil, milliseconds: Double = 0) {
        self.file = file
        self.test = test
        self.line = line
        self.passed = passed
        self.kind = kind
        self.message = message
        self.location = location
        self.milliseconds = milliseconds
    }

    /// `✔ Orders.test.js › a shipped order cannot reopen` or `✘ … — message (location)`.
    public var summary: String {
        passed ? "✔ \(file) › \(test)" : "✘ \(file) › \(test)\n    \(message ?? "failed")\(location.map { "\n    at \($0)" } ?? "")"
    }
}

/// Why something did not pass — a deliberate refusal, or something broken. A failed
/// ``DeltaChange`` carries one in its ``ChangeFailure``; `relata` reports it (`kind` in
/// `--json` output) and its exit status tells it (1 or 3).
///
/// ```swift
/// if result.kind == .ruleError { print("fix the rule, not the data:", result.message ?? "") }
/// ```
public enum FailureKind: String, Codable, Sendable, CaseIterable {
    /// A rule said no on purpose: `fail(…)`.
    case refusal
    /// A rule is broken: it threw an error that is not a `fail()` (a `TypeError`, a thrown
    /// non-Error value), ran past the time limit, or a calculated field failed.
    case ruleError
    /// A value did not fit its field, or named a field or row that does not exist.
    case invalidValue
    /// A primary or foreign key would be broken.
    case constraint
    /// The row changed (or went) underneath since it was read: optimistic concurrency refused the change.
    case conflict
    /// The data source could not store the change (a database error).
    case storeError
    /// A rule test's expectation did not hold (`relata test`).
    case expectation
    /// A rule test file's own code threw (not a rule, not an expectation), or a test could not start.
    case testError

    /// True for the kinds that mean a rule script needs fixing.
    public var isBrokenRule: Bool { self == .ruleError }
}

import Relata

extension FailureKind {
    /// The kind of a rule's error: a refusal for `fail(…)`, a broken rule for anything else.
    public init(_ error: ScriptError) {
        self = error.kind == .ruleFailed ? .refusal : .ruleError
    }
}

extension ChangeFailure {
    /// A rule's error as a change's failure: kind, message, event, table, row and script location.
    ///
    /// ```swift
    /// change.fail(ChangeFailure(scriptError))
    /// ```
    public init(_ error: ScriptError) {
        self.init(FailureKind(error), error.message, event: error.event, table: error.table, row: error.row,
                  file: error.file, line: error.line, column: error.column)
    }

    /// Any error that failed a change: a rule's, a value's or a key's, or another (a broken rule).
    public init(describing error: any Error) {
        switch error {
        case let error as ScriptError: self.init(error)
        case let error as RelataError: self.init(error)
        default: self.init(.ruleError, "\(error)")
        }
    }
}

extension ScriptError {
    /// The rule error behind a change's failure, for code that throws it
    /// (a refusal becomes ``Kind/ruleFailed``, anything else ``Kind/runtime``).
    ///
    /// ```swift
    /// if let failure = change.failure { throw ScriptError(failure) }
    /// ```
    public init(_ failure: ChangeFailure) {
        self.init(failure.kind == .refusal ? .ruleFailed : .runtime, failure.message, file: failure.file, line: failure.line,
                  column: failure.column, event: failure.event, table: failure.table, row: failure.row)
    }

    /// The error of the first change that failed in `deltas` (as an apply returned them),
    /// or nil when every change went through. Tests use it to treat a partly failed
    /// apply as a failure.
    ///
    /// ```swift
    /// let deltas = try adapter.applyChanges(for: adapter.tables)
    /// if let failure = ScriptError(firstFailureIn: deltas) { throw failure }
    /// ```
    public init?(firstFailureIn deltas: [Delta]) {
        guard let delta = deltas.first(where: \.hasErrors), let change = delta.failedChanges.first else { return nil }
        if var failure = change.failure {
            failure.table = failure.table ?? delta.tableName
            self.init(failure)
        } else {
            self.init(.ruleFailed, change.message ?? "the change failed", table: delta.tableName)
        }
    }
}

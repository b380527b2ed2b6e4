import Relata

/// What rules see while they run: `session`, `isServer`, and the data `lda` reaches.
///
/// It belongs to a unit of work — an apply, a validation, a request on a server —
/// not to the rules: one ``RuleRuntime`` serves many sessions, one after another.
///
/// ```swift
/// let environment = RuleEnvironment(session: Session(values: ["UserId": 7], roles: ["Sales"]), isServer: true,
///                                   dataAccess: TableDataAccess(tables: [clients, orders]))
/// ```
public struct RuleEnvironment {
    /// The user's session (`session` in scripts).
    public var session: Session
    /// Whether the rules run on a data server (`isServer` in scripts).
    public var isServer: Bool
    /// What `lda` reads and writes; nil where rules run without data (an `lda` call then throws).
    public var dataAccess: (any RuleDataAccess)?

    /// Creates an environment.
    public init(session: Session = Session(), isServer: Bool = false, dataAccess: (any RuleDataAccess)? = nil) {
        self.session = session
        self.isServer = isServer
        self.dataAccess = dataAccess
    }
}

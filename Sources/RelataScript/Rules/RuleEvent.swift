/// The events a rule script can handle — one list, in the order they run, used by the row
/// events, the batch validation, the apply, the checker and the TypeScript declarations.
/// A handler is a script's top-level function named after its event (``handlerName``).
///
/// ```swift
/// RuleEvent.posting(inserting: false)   // [.beforePost, .beforeUpdate]
/// RuleEvent.beforeUpdate.parameters     // ["row", "old"]
/// ```
public enum RuleEvent: String, CaseIterable, Sendable {
    /// A row is added, before it joins its table: set defaults here.
    case onNewRow
    /// A change is posted (after `edit()`, or at once for a direct write or an added row).
    case beforePost
    /// After `beforePost`, for a new row.
    case beforeInsert
    /// After `beforePost`, for an existing row; `old` holds its original values.
    case beforeUpdate
    /// A row is removed.
    case beforeDelete
    /// An apply starts on a table's delta.
    case beforeProcessDelta
    /// Before each change of the delta is applied.
    case beforeProcessDeltaChange
    /// After each change of the delta was applied.
    case afterProcessDeltaChange
    /// After the table's delta.
    case afterProcessDelta
    /// Before the apply commits; a failure rolls everything back.
    case beforeCommit
    /// After the apply committed.
    case afterCommit
    /// After the apply rolled back.
    case afterRollback
    /// Before tables are read.
    case beforeGetData
    /// After tables were read.
    case afterGetData
    /// After a user logged in to a data server (schema-wide script): may add session values and roles.
    case afterLogin

    /// When an event runs.
    public enum Phase: Sendable {
        /// As rows change.
        case row
        /// For each table's delta during an apply.
        case delta
        /// Once per apply.
        case transaction
        /// Around a read.
        case data
        /// When a user logs in to a data server.
        case session
    }

    public var phase: Phase {
        switch self {
        case .onNewRow, .beforePost, .beforeInsert, .beforeUpdate, .beforeDelete: return .row
        case .beforeProcessDelta, .beforeProcessDeltaChange, .afterProcessDeltaChange, .afterProcessDelta: return .delta
        case .beforeCommit, .afterCommit, .afterRollback: return .transaction
        case .beforeGetData, .afterGetData: return .data
        case .afterLogin: return .session
        }
    }

    /// The name of the function that handles the event.
    public var handlerName: String { rawValue }

    /// What the handler receives, in order.
    public var parameters: [String] {
        switch phase {
        case .row: return self == .beforeUpdate ? ["row", "old"] : ["row"]
        case .delta: return self == .beforeProcessDeltaChange || self == .afterProcessDeltaChange ? ["delta", "change"] : ["delta"]
        case .transaction: return []
        case .data: return ["tableNames", "requests"]
        case .session: return ["login"]
        }
    }

    /// The row events, in order.
    public static let rowEvents = allCases.filter { $0.phase == .row }
    /// The delta events, in the order they run for each delta.
    public static let deltaEvents = allCases.filter { $0.phase == .delta }

    /// The events a posted change runs, in order.
    public static func posting(inserting: Bool) -> [RuleEvent] {
        [.beforePost, inserting ? .beforeInsert : .beforeUpdate]
    }
}

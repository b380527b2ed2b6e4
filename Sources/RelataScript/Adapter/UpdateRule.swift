/// How an apply treats a table's changes.
///
/// ```swift
/// adapter.setUpdateRule(UpdateRule(onFailure: .rollbackAll), forTable: "Orders")
/// adapter.updateOrder = ["Clients", "Orders", "OrderDetails"]
/// ```
public struct UpdateRule: Sendable, Hashable {
    /// What a failed change of the table does to the rest of the apply.
    public enum FailureBehavior: String, Sendable, Hashable, Codable {
        /// The failed change stays pending with its message; every other change still applies.
        case applyOthers
        /// Nothing of the whole apply is committed: every change stays pending, and `afterRollback` runs.
        case rollbackAll
    }

    /// What a failed change of the table does to the rest of the apply.
    public var onFailure: FailureBehavior

    public init(onFailure: FailureBehavior = .applyOthers) {
        self.onFailure = onFailure
    }
}

/// The session rules see as `session`: key/values and roles.
///
/// ```swift
/// adapter.session = Session(values: ["UserId": 7], roles: ["Sales"])
/// ```
/// ```js
/// if (!session.hasRole('Sales')) fail('only sales may change discounts');
/// ```
public struct Session: Sendable, Hashable {
    /// Values by key (`session['UserId']`).
    public var values: [String: Relata.Value]
    /// Role names (`session.roles`, `session.hasRole(name)`).
    public var roles: [String]

    public init(values: [String: Relata.Value] = [:], roles: [String] = []) {
        self.values = values
        self.roles = roles
    }
}

import Relata

/// How an apply treats a table's changes.
///
/// ```swift
/// adapter.setUpdateRule(UpdateRule(onFailure: .rollbackAll), forTable: "Orders")
/// adapter.updateOrder = ["Clients", "Orders", "OrderDetails"]
/// ```
public struct UpdateRule: Sendable, Hashable, Codable {
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


/// The session rules see as `session`: key/values and roles.
///
/// ```swift
/// adapter.session = Session(values: ["UserId": 7], roles: ["Sales"])
/// ```
/// ```js
/// if (!session.hasRole('Sales')) fail('only sales may change discounts');
/// ```
public struct Session: Sendable, Hashable, Codable {
    /// Values by key (`session['UserId']`).
    public var values: [String: Value]
    /// Role names (`session.roles`, `session.hasRole(name)`).
    public var roles: [String]

    public init(values: [String: Value] = [:], roles: [String] = []) {
        self.values = values
        self.roles = roles
    }
}

import Foundation

/// A flag one thread sets and another reads, or waits for with a deadline.
public final class ConditionFlag: @unchecked Sendable {
    // @unchecked Sendable: `value` is only read and written under `condition`.
    private let condition = NSCondition()
    private var value = false

    public init() {}

    public func set() {
        condition.withLock {
            value = true
            condition.broadcast()
        }
    }

    public var isSet: Bool { condition.withLock { value } }

    /// Waits (blocking the thread) until the flag is set, for at most `limit`; whether it is set.
    public func wait(for limit: Duration) -> Bool {
        let (seconds, attoseconds) = limit.components
        let deadline = Date(timeIntervalSinceNow: Double(seconds) + Double(attoseconds) / 1e18)
        condition.lock()
        defer { condition.unlock() }
        while !value, condition.wait(until: deadline) {}
        return value
    }

    /// Waits as ``wait(for:)`` does, and throws ``NotSet`` when the flag was not set in time.
    /// For work on a thread of its own: an `#expect` there records its issue for no test, while
    /// the error reaches the test that awaits the work.
    public func require(within limit: Duration, _ what: String) throws {
        guard wait(for: limit) else { throw NotSet(description: "\(what) was not set within \(limit)") }
    }

    public struct NotSet: Error, CustomStringConvertible {
        public let description: String
    }
}

import Foundation

/// Brute-force protection: after `limit` failed logins for a user name within
/// `window`, further attempts for that name are refused until the window has passed
/// since the first of them — right password or not.
final class LoginThrottle: @unchecked Sendable {
    // @unchecked Sendable: `failures` is read and written only while `lock` is held.
    private let lock = NSLock()
    private var failures: [String: [Date]] = [:]
    let limit: Int
    let window: TimeInterval

    init(limit: Int = 5, window: TimeInterval = 300) {
        self.limit = limit
        self.window = window
    }

    /// How long until `user` may try again (nil: now).
    func waitTime(for user: String, now: Date = Date()) -> TimeInterval? {
        lock.withLock {
            let recent = (failures[user] ?? []).filter { now.timeIntervalSince($0) < window }
            failures[user] = recent.isEmpty ? nil : recent
            guard recent.count >= limit, let first = recent.first else { return nil }
            return window - now.timeIntervalSince(first)
        }
    }

    func recordFailure(for user: String, now: Date = Date()) {
        lock.withLock {
            failures[user, default: []].append(now)
            // Bounded memory under a flood of made-up names: forget the oldest names first.
            if failures.count > 100_000, let oldest = failures.min(by: { ($0.value.last ?? now) < ($1.value.last ?? now) })?.key {
                failures[oldest] = nil
            }
        }
    }

    func recordSuccess(for user: String) {
        lock.withLock { failures[user] = nil }
    }
}

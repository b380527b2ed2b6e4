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
    private static let maximumNames = 100_000

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
            // Bounded memory under a flood of made-up names: past the cap, forget the names whose
            // failures have all expired (one pass, then room for as many again before the next).
            if failures.count > Self.maximumNames {
                failures = failures.filter { now.timeIntervalSince($0.value.last ?? now) < window }
                if failures.count > Self.maximumNames / 2 {
                    failures = Dictionary(uniqueKeysWithValues: failures.prefix(Self.maximumNames / 2).map { ($0.key, $0.value) })
                }
            }
        }
    }

    func recordSuccess(for user: String) {
        lock.withLock { failures[user] = nil }
    }
}

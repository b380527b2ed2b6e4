import Foundation
import Relata

/// The sessions one server instance read lately, so a request's session costs no database read.
///
/// Every change that ends sessions before their time (a logout, an operator's `relata sessions
/// end`, an account removed or given other roles) adds one to a counter in the session database,
/// in the same transaction. Each instance reads that counter at most once per ``staleness`` — not
/// once per request — and forgets every session it holds when it moved. So a session ended on one
/// instance is refused by the others within ``staleness``; one ended here, at once.
final class SessionCache: @unchecked Sendable {
    // @unchecked Sendable: `entries`, `generation` and `checked` are read and written only while `lock` is held.
    struct Entry {
        let session: Session
        var expires: Double
        let ends: Double
    }

    /// How long a cached session is served without looking at the counter; zero turns the cache off.
    let staleness: Duration
    /// The most sessions held; past it the cache starts again empty.
    static let capacity = 50_000
    private let lock = NSLock()
    private var entries: [String: Entry] = [:]
    private var generation: Int64?
    private var checked: ContinuousClock.Instant?

    init(staleness: Duration) {
        self.staleness = staleness
    }

    var isOn: Bool { staleness > .zero }

    /// Whether the counter is due to be read again.
    var isDue: Bool {
        guard isOn else { return false }
        return lock.withLock { checked.map { ContinuousClock.now - $0 >= staleness } ?? true }
    }

    /// Notes the counter as just read: the sessions held are forgotten when it moved.
    func saw(generation seen: Int64) {
        lock.withLock {
            if generation != seen { entries = [:] }
            generation = seen
            checked = .now
        }
    }

    func entry(_ digest: String) -> Entry? {
        guard isOn else { return nil }
        return lock.withLock { entries[digest] }
    }

    func store(_ entry: Entry, for digest: String) {
        guard isOn else { return }
        lock.withLock {
            if entries.count >= Self.capacity { entries = [:] }
            entries[digest] = entry
        }
    }

    func forget(_ digest: String) {
        lock.withLock { _ = entries.removeValue(forKey: digest) }
    }

    func forgetAll() {
        lock.withLock { entries = [:] }
    }
}

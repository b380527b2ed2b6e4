import Foundation
import Synchronization

/// The deadlines of request bodies still arriving, checked together a few times a second by one
/// sweeping thread. A body that arrives at once — nearly every one — costs a lock taken twice,
/// where a timer of the connection's event loop cost scheduling and cancelling it from another
/// thread: each a wake-up of that loop. A deadline is met at most ``interval`` late — also while
/// Swift's cooperative threads are all busy, when a slow client is cut off most usefully: the
/// sweeper is a thread of its own, not a task, and ends when no deadline is pending.
///
/// ```swift
/// let deadline = BodyDeadlines.shared.add(after: .seconds(30)) { reading.cancel() }
/// defer { BodyDeadlines.shared.remove(deadline) }
/// ```
final class BodyDeadlines: Sendable {
    /// The server's deadlines (every server of the process shares them).
    static let shared = BodyDeadlines(interval: .milliseconds(50))

    /// How often the deadlines are checked while any is pending.
    let interval: Duration
    private let state = Mutex(State())

    private struct State {
        var pending: [Int: Pending] = [:]
        var nextID = 0
        /// Whether the sweeping thread runs (it ends once nothing is pending).
        var sweeping = false
    }

    private struct Pending {
        let deadline: ContinuousClock.Instant
        let expire: @Sendable () -> Void
    }

    init(interval: Duration) {
        self.interval = interval
    }

    /// Calls `expire` once `duration` has passed, unless the deadline is removed first; returns
    /// the deadline, for ``remove(_:)``.
    func add(after duration: Duration, expire: @escaping @Sendable () -> Void) -> Int {
        let deadline = ContinuousClock.now + duration
        let (id, startSweeping) = state.withLock { state in
            state.nextID &+= 1
            state.pending[state.nextID] = Pending(deadline: deadline, expire: expire)
            defer { state.sweeping = true }
            return (state.nextID, !state.sweeping)
        }
        if startSweeping {
            let thread = Thread { self.sweep() }
            thread.name = "relata.body-deadlines"
            thread.start()
        }
        return id
    }

    /// Forgets a deadline (its work ended in time); nothing happens for one already met.
    func remove(_ id: Int) {
        _ = state.withLock { $0.pending.removeValue(forKey: id) }
    }

    /// How many deadlines are pending.
    var count: Int { state.withLock { $0.pending.count } }

    private func sweep() {
        let (seconds, attoseconds) = interval.components
        let pause = Double(seconds) + Double(attoseconds) / 1e18
        while true {
            Thread.sleep(forTimeInterval: pause)
            let now = ContinuousClock.now
            let expired: [Pending]? = state.withLock { state in
                guard !state.pending.isEmpty else {
                    state.sweeping = false
                    return nil
                }
                let due = state.pending.filter { $0.value.deadline <= now }
                for id in due.keys { state.pending[id] = nil }
                return Array(due.values)
            }
            guard let expired else { return }
            for pending in expired { pending.expire() }
        }
    }
}

import Dispatch
import Synchronization

/// A value made on another thread while its caller goes on with other work; ``value()`` waits
/// for it. A large apply uses it to hash or encode its batch while it validates or replays the
/// same changes: with a core free, the two take the time of the longer.
///
/// ```swift
/// let fingerprint = MadeMeanwhile(coveringChanges: deltas.changeCount) { try DeltaFingerprint.of(deltas) }
/// …                                   // the edits replayed meanwhile
/// let made = try fingerprint.value()  // waits only if it is not ready
/// ```
package final class MadeMeanwhile<Value: Sendable>: Sendable {
    private let finished = DispatchGroup()
    private let result = Mutex<Result<Value, any Error>?>(nil)

    /// Starts making the value of work over some changes: on a thread of Dispatch's own, or here
    /// and now for fewer than ``changesWorthAThread`` (a hash or an encoding of a few changes
    /// takes less time than waking another thread for it).
    package init(coveringChanges changes: Int, _ make: @escaping @Sendable () throws -> Value) {
        guard changes >= changesWorthAThread else {
            result.withLock { $0 = Result(catching: make) }
            return
        }
        // Never Swift concurrency's pool: `value()` blocks its caller, which may be occupying it.
        finished.enter()
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            let made = Result(catching: make)
            result.withLock { $0 = made }
            finished.leave()
        }
    }

    /// The value, once made (this waits until then); what making it threw, if it failed. Any
    /// number of calls, from any thread, get the same.
    package func value() throws -> Value {
        finished.wait()
        guard let made = result.withLock({ $0 }) else { preconditionFailure("the result is set before the group is left, or in init") }
        return try made.get()
    }
}

/// How many changes work must cover for ``MadeMeanwhile`` to give it a thread.
package let changesWorthAThread = 1_000


import Dispatch
import Synchronization

/// Gives up a large value on a thread of Dispatch's own, so that freeing it — a batch of
/// 100,000 changes is some 300,000 arrays of values — leaves its caller's path: a data
/// server answers an apply without first freeing the request and its answer, and a client
/// returns from an apply without first freeing the batch it sent. With a core free, the
/// freeing costs the caller nothing.
///
/// ```swift
/// FreedMeanwhile.free(consume deltas, coveringChanges: deltas.changeCount)
/// ```
package enum FreedMeanwhile {
    /// A value in a box, taken out and dropped by the queue's block: the value is freed there
    /// whichever thread lets go of the box last.
    private final class Parcel<Value: Sendable>: Sendable {
        private let value: Mutex<Value?>
        init(_ value: consuming Value) { self.value = Mutex(Optional(value)) }
        func drop() { value.withLock { $0 = nil } }
    }

    /// Frees `value` on another thread when it holds work over ``changesWorthAThread`` changes or
    /// more; fewer are freed here and now (waking a thread would cost more than freeing them).
    /// Pass the value with `consume`, so that no other reference to it is left here.
    package static func free<Value: Sendable>(_ value: consuming Value, coveringChanges changes: Int) {
        guard changes >= changesWorthAThread else { return }
        let parcel = Parcel(value)
        queue.async { parcel.drop() }
    }

    /// Serial and of background priority: freeing waits for every other kind of work.
    private static let queue = DispatchQueue(label: "relata.freed-meanwhile", qos: .background)
}

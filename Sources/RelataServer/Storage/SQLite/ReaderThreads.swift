import Foundation

/// Runs a database's asynchronous reads off Swift's cooperative pool — at most `limit` at once
/// (one per reader connection, so none waits for a connection), the rest queued in the order
/// they were asked for. A read hops once from the caller's task to a thread of the queue and
/// once back; GRDB's asynchronous read hops three times (to its pool's waiting queue, to the
/// reader's queue, back), which cost a one-row read more than the read itself.
final class ReaderThreads: @unchecked Sendable {
    // @unchecked Sendable: `waiting`, `next`, `idleLanes` and `lanes` are read and written only
    // while `lock` is held.
    private let lock = NSLock()
    private var waiting: [@Sendable () -> Void] = []
    /// The index in `waiting` of the next job to run.
    private var next = 0
    /// Serial queues, one per read running at once: Dispatch gives a serial queue a thread even
    /// while others block (a read waits for its slow client), where a concurrent queue shares
    /// the few threads of Swift's cooperative pool — and would starve it.
    private var idleLanes: [DispatchQueue] = []
    private var lanes = 0
    private let limit: Int
    private let label: String

    init(limit: Int, label: String) {
        self.limit = max(1, limit)
        self.label = label
    }

    /// Runs `work` on a thread of the queue; the caller's task waits without holding a thread.
    func run<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            submit { continuation.resume(with: Swift.Result { try work() }) }
        }
    }

    private func submit(_ job: @escaping @Sendable () -> Void) {
        let lane: DispatchQueue? = lock.withLock {
            if let idle = idleLanes.popLast() { return idle }
            guard lanes < limit else {
                waiting.append(job)
                return nil
            }
            lanes += 1
            return DispatchQueue(label: label)
        }
        if let lane { lane.async { self.runJobs(on: lane, from: job) } }
    }

    /// Runs `job`, then the jobs waiting, one after another, until none waits.
    private func runJobs(on lane: DispatchQueue, from job: @escaping @Sendable () -> Void) {
        var job = job
        while true {
            job()
            let following: (@Sendable () -> Void)? = lock.withLock {
                guard next < waiting.count else {
                    idleLanes.append(lane)
                    return nil
                }
                let following = waiting[next]
                next += 1
                // The jobs taken leave the front once they are all, or half, of what is held.
                if next == waiting.count || next > 64 && next * 2 > waiting.count {
                    waiting.removeFirst(next)
                    next = 0
                }
                return following
            }
            guard let following else { return }
            job = following
        }
    }
}

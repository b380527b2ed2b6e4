import Foundation

/// Runs blocking work — a database read, a wait for a pooled connection — off Swift's cooperative
/// pool, on at most `limit` serial queues at once; more work waits its turn, in the order it came.
///
/// Serial queues, because Dispatch gives each one a thread of its own even while others block,
/// whereas on Linux a concurrent queue draws on the same few threads (one per core) as Swift's
/// cooperative pool: work blocked there would hold up every task, including those that would
/// end the wait. A piece of work hops once from the caller's task to a lane and once back.
///
/// ```swift
/// let reads = BlockingLanes(limit: 16, label: "relata.sqlite.read")
/// let count = try await reads.run { try database.read { try $0.count() } }
/// ```
final class BlockingLanes: @unchecked Sendable {
    // @unchecked Sendable: `waiting`, `next`, `idleLanes` and `lanes` are read and written only
    // while `lock` is held.
    private let lock = NSLock()
    private var waiting: [@Sendable () -> Void] = []
    /// The index in `waiting` of the next job to run.
    private var next = 0
    /// The serial queues not running work now, and how many there are in all.
    private var idleLanes: [DispatchQueue] = []
    private var lanes = 0
    private let limit: Int
    private let label: String

    init(limit: Int, label: String) {
        self.limit = max(1, limit)
        self.label = label
    }

    /// Runs `work` on a lane; the caller's task waits without holding a thread.
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

import Foundation

/// Runs blocking work — a database read, a wait for a pooled connection — off Swift's cooperative
/// pool, on at most `limit` serial queues at once; more work waits its turn, in the order it came.
/// Each lane may keep a resource of its own, made on its first job and used by one job at a time
/// (a SQLite database's lanes each keep a reader connection).
///
/// Serial queues, because Dispatch gives each one a thread of its own even while others block,
/// whereas on Linux a concurrent queue draws on the same few threads (one per core) as Swift's
/// cooperative pool: work blocked there would hold up every task, including those that would
/// end the wait. A piece of work hops once from the caller's task to a lane and once back.
///
/// ```swift
/// let reads = BlockingLanes(limit: 16, label: "relata.sqlite.read") { try openReader() }
/// let count = try await reads.run { reader in try reader.count() }
/// ```
final class BlockingLanes<Resource>: @unchecked Sendable {
    // @unchecked Sendable: `waiting`, `next`, `idleLanes` and `lanes` are read and written only
    // while `lock` is held; a lane's resource only by the job its queue runs.
    private let lock = NSLock()
    private var waiting: [@Sendable (Lane) -> Void] = []
    /// The index in `waiting` of the next job to run.
    private var next = 0
    /// The lanes not running work now, and how many there are in all.
    private var idleLanes: [Lane] = []
    private var lanes = 0
    private let limit: Int
    private let label: String
    private let makeResource: @Sendable () throws -> Resource

    /// A serial queue and what its jobs share.
    private final class Lane: @unchecked Sendable {
        // @unchecked Sendable: `made` is read and written only by the jobs of `queue`, one at a time.
        let queue: DispatchQueue
        private var made: Resource?

        init(queue: DispatchQueue) { self.queue = queue }

        /// The lane's resource, made by its first job that needs it (a failed attempt is tried again by the next).
        func resource(_ make: () throws -> Resource) throws -> Resource {
            if let made { return made }
            let resource = try make()
            made = resource
            return resource
        }
    }

    init(limit: Int, label: String, makeResource: @escaping @Sendable () throws -> Resource) {
        self.limit = max(1, limit)
        self.label = label
        self.makeResource = makeResource
    }

    /// Runs `work` with a lane's resource, on the lane; the caller's task waits without holding a thread.
    func run<Result: Sendable>(_ work: @escaping @Sendable (Resource) throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            submit { [makeResource] lane in continuation.resume(with: Swift.Result { try work(try lane.resource(makeResource)) }) }
        }
    }

    private func submit(_ job: @escaping @Sendable (Lane) -> Void) {
        let lane: Lane? = lock.withLock {
            if let idle = idleLanes.popLast() { return idle }
            guard lanes < limit else {
                waiting.append(job)
                return nil
            }
            lanes += 1
            return Lane(queue: DispatchQueue(label: label))
        }
        if let lane { lane.queue.async { self.runJobs(on: lane, from: job) } }
    }

    /// Runs `job`, then the jobs waiting, one after another, until none waits.
    private func runJobs(on lane: Lane, from job: @escaping @Sendable (Lane) -> Void) {
        var job = job
        while true {
            job(lane)
            let following: (@Sendable (Lane) -> Void)? = lock.withLock {
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

extension BlockingLanes where Resource == Void {
    /// Lanes that keep nothing of their own.
    convenience init(limit: Int, label: String) {
        self.init(limit: limit, label: label) {}
    }

    /// Runs `work` on a lane; the caller's task waits without holding a thread.
    func run<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await run { (_: Void) in try work() }
    }
}

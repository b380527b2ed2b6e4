import Foundation

/// Threads of Relata's own for work that blocks (a statement waiting for PostgreSQL, a session
/// lookup waiting for a connection, rows waiting for a slow client): started as work comes, up
/// to ``limit``, and ended after ``idleLifetime`` without work. On Linux a Dispatch concurrent
/// queue's work runs on the threads of Swift's cooperative pool, which Dispatch grows by one a
/// second: eight blocked calls there held up every task of the process for seconds. Serial
/// queues take threads from a process-wide set that blocked work can exhaust. These threads
/// are neither.
///
/// ```swift
/// let session = try await BlockingThreads.shared.run { try sessions.session(for: token) }
/// ```
final class BlockingThreads: @unchecked Sendable {
    // @unchecked Sendable: every variable is read and written only while `condition` is locked;
    // `limit` and `idleLifetime` are constants.
    static let shared = BlockingThreads(limit: 512, idleLifetime: 10)

    /// The most threads at once; more work waits for one, first come first served.
    let limit: Int
    /// How long a thread waits for work before it ends (seconds).
    let idleLifetime: TimeInterval
    private let condition = NSCondition()
    /// The work waiting for a thread, first come first served.
    private var waiting = FIFO<@Sendable () -> Void>()
    private var threads = 0
    private var idle = 0
    /// Idle threads signalled for work that have not woken yet.
    private var wakeUps = 0

    init(limit: Int, idleLifetime: TimeInterval) {
        self.limit = max(1, limit)
        self.idleLifetime = idleLifetime
    }

    /// Runs `work` on one of the threads and returns what it returned.
    func run<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            submit { continuation.resume(with: Swift.Result { try work() }) }
        }
    }

    /// How many threads exist now (working or idle).
    var threadCount: Int { condition.withLock { threads } }

    private func submit(_ job: @escaping @Sendable () -> Void) {
        let start: Bool = condition.withLock {
            waiting.append(job)
            if idle > wakeUps {
                wakeUps += 1
                condition.signal()
                return false
            }
            guard threads < limit else { return false }
            threads += 1
            return true
        }
        if start {
            let thread = Thread { [self] in work() }
            thread.name = "relata.blocking"
            thread.start()
        }
    }

    private func work() {
        condition.lock()
        while true {
            guard let job = waiting.popFirst() else {
                idle += 1
                let signalled = condition.wait(until: Date(timeIntervalSinceNow: idleLifetime))
                idle -= 1
                if wakeUps > 0 { wakeUps -= 1 }
                if !signalled, waiting.isEmpty {
                    threads -= 1
                    condition.unlock()
                    return
                }
                continue
            }
            condition.unlock()
            job()
            condition.lock()
        }
    }
}

import Foundation

/// A serial executor that runs every job on one thread of its own, so a script that
/// runs for long (up to its time limit) blocks that thread, never one of the
/// cooperative pool's few threads that every other task needs.
final class DedicatedThreadExecutor: SerialExecutor, @unchecked Sendable {
    // @unchecked Sendable: `jobs` and `isStopping` are read and written only while
    // `condition` is locked; the thread itself is started once, in init.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var isStopping = false

    /// Starts the thread. It keeps the executor alive until ``stop()`` and the last job ran.
    init(name: String) {
        let thread = Thread { [self] in runJobs() }
        thread.name = name
        // JavaScriptCore measures the stack it runs on; give deep (but bounded) recursion room.
        thread.stackSize = 8 << 20
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Lets the thread end once the jobs already enqueued have run.
    func stop() {
        condition.lock()
        isStopping = true
        condition.signal()
        condition.unlock()
    }

    private func runJobs() {
        while true {
            condition.lock()
            while jobs.isEmpty && !isStopping { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedSerialExecutor())
        }
    }
}

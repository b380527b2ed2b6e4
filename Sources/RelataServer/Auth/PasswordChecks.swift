import Foundation
import HummingbirdBcrypt

/// Password checks, bounded: bcrypt is slow on purpose, so checks run on `workers` threads of
/// their own, and at most `waiting` more wait in line; a check beyond that is refused at
/// once (``Full``, answered 503 with `Retry-After`) rather than queued for ever.
///
/// A check waiting in line holds no thread: ``verify(_:hash:)`` suspends its task, so a flood of
/// logins leaves every other thread — the ones session lookups and reads need — free.
///
/// A login for a name nobody has does no hashing: it waits as long as the recent real checks
/// took (``typicalCheckSeconds``; the server waits without holding a thread), so its answer
/// takes as long as a wrong password's without costing a core or a thread. A flood of logins
/// with made-up names therefore slows nobody; a flood for real names is stopped by the lockout
/// before any hashing.
///
/// Each ``LoginService`` has its own; the server sets their limits from ``ServerConfiguration``.
///
/// ```swift
/// let checks = PasswordChecks(workers: 1, waiting: 16)
/// guard try await checks.verify(password, hash: account.passwordHash) else { return nil }
/// ```
public final class PasswordChecks: @unchecked Sendable {
    // @unchecked Sendable: every stored property is read and written only while `condition` is locked.
    private let condition = NSCondition()
    private var workers: Int
    private var waiting: Int
    /// Checks not yet taken by a worker, oldest first.
    private var line: [Job] = []
    private var threads = 0
    private var running = 0
    private var finished = 0
    /// How long a real check took lately (a moving average), in seconds.
    private var typicalSeconds = 0.25

    /// Every worker is busy and the line is full.
    public struct Full: Error, Sendable {}

    private struct Job {
        let password: String
        let hash: String
        let done: @Sendable (Bool) -> Void
    }

    public init(workers: Int = max(1, ProcessInfo.processInfo.activeProcessorCount / 2), waiting: Int = 16) {
        self.workers = max(1, workers)
        self.waiting = max(0, waiting)
    }

    /// Sets how many checks run at once and how many may wait.
    public func setLimits(workers: Int, waiting: Int) {
        condition.withLock {
            self.workers = max(1, workers)
            self.waiting = max(0, waiting)
            condition.broadcast()
        }
    }

    /// Checks a password against a bcrypt hash on a worker; the task waits for its turn without
    /// holding a thread.
    ///
    /// - Throws: ``Full`` at once when every worker is busy and the line is full.
    public func verify(_ password: String, hash: String) async throws -> Bool {
        try await withCheckedThrowingContinuation { continuation in
            do {
                try submit(Job(password: password, hash: hash) { continuation.resume(returning: $0) })
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }

    /// ``verify(_:hash:)`` for a caller that may block its thread until the check is done.
    public func verifyWaiting(_ password: String, hash: String) throws -> Bool {
        let done = DispatchSemaphore(value: 0)
        let outcome = Outcome()
        try submit(Job(password: password, hash: hash) { matches in
            outcome.matches = matches
            done.signal()
        })
        done.wait()
        return outcome.matches
    }

    /// A check's answer, handed from its worker to the thread waiting for it.
    private final class Outcome: @unchecked Sendable {
        // @unchecked Sendable: written once before the semaphore is signalled, read after the wait.
        var matches = false
    }

    private func submit(_ job: Job) throws {
        try condition.withLock {
            guard running + line.count < workers + waiting else { throw Full() }
            line.append(job)
            if threads < workers && threads - running < line.count {
                threads += 1
                let worker = Thread { [self] in work() }
                worker.name = "relata.password-check"
                worker.start()
            }
            condition.signal()
        }
    }

    /// A worker thread: takes checks from the line until there are more workers than the limit,
    /// or none came for a while (an idle service keeps no threads).
    private func work() {
        condition.lock()
        while true {
            var idle = true
            while line.isEmpty && threads <= workers && idle { idle = condition.wait(until: Date(timeIntervalSinceNow: 30)) }
            if threads > workers || line.isEmpty {
                threads -= 1
                condition.unlock()
                return
            }
            let job = line.removeFirst()
            running += 1
            condition.unlock()
            let started = ContinuousClock.now
            let matches = Bcrypt.verify(job.password, hash: job.hash)
            let took = ContinuousClock.now - started
            condition.lock()
            running -= 1
            finished += 1
            // The first check sets the time outright: an unknown name's wait follows the users' cost from the start.
            typicalSeconds = finished == 1 ? took.seconds : 0.8 * typicalSeconds + 0.2 * took.seconds
            condition.unlock()
            job.done(matches)
            condition.lock()
        }
    }

    /// Checks running or waiting for a worker now.
    var inProgress: Int {
        condition.withLock { running + line.count }
    }

    /// Checks that hashed a password, since this value was made.
    var completed: Int {
        condition.withLock { finished }
    }

    /// How long a real check took lately, in seconds (at most 5): how long the answer for a
    /// user nobody has waits, without hashing, so it takes as long as a wrong password's.
    public var typicalCheckSeconds: TimeInterval {
        condition.withLock { min(typicalSeconds, 5) }
    }
}

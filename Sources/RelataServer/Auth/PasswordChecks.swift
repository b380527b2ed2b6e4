import Foundation
import HummingbirdBcrypt

/// Password checks, bounded: bcrypt is slow on purpose, so at most `workers` checks run at
/// once and at most `waiting` more wait; a check beyond that is refused at
/// once (``Full``, answered 503 with `Retry-After`) rather than queued for ever.
///
/// A login for a name nobody has does no hashing: it waits as long as the recent real checks
/// took (``typicalCheckSeconds``; the server waits without holding a thread), so its answer
/// takes as long as a wrong password's without costing a core or a thread. A flood of logins with made-up names therefore slows nobody; a flood for
/// real names is stopped by the lockout before any hashing.
///
/// Each ``LoginService`` has its own; the server sets their limits from ``ServerConfiguration``.
///
/// ```swift
/// let checks = PasswordChecks(workers: 1, waiting: 16)
/// guard try checks.verify(password, hash: account.passwordHash) else { return nil }
/// ```
public final class PasswordChecks: @unchecked Sendable {
    // @unchecked Sendable: every stored property is read and written only while `condition` is locked.
    private let condition = NSCondition()
    private var workers: Int
    private var waiting: Int
    private var running = 0
    private var queued = 0
    private var finished = 0
    /// How long a real check took lately (a moving average), in seconds.
    private var typicalSeconds = 0.25

    /// Every worker is busy and the line is full.
    public struct Full: Error, Sendable {}

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

    /// Checks a password against a bcrypt hash, waiting (blocking the thread) for a free worker.
    ///
    /// - Throws: ``Full`` at once when every worker is busy and the line is full.
    public func verify(_ password: String, hash: String) throws -> Bool {
        condition.lock()
        if running >= workers {
            guard queued < waiting else {
                condition.unlock()
                throw Full()
            }
            queued += 1
            while running >= workers { condition.wait() }
            queued -= 1
        }
        running += 1
        condition.unlock()
        let started = ContinuousClock.now
        let matches = Bcrypt.verify(password, hash: hash)
        let took = ContinuousClock.now - started
        condition.withLock {
            running -= 1
            finished += 1
            typicalSeconds = 0.8 * typicalSeconds + 0.2 * took.seconds
            condition.signal()
        }
        return matches
    }

    /// Checks running or waiting for a worker now.
    var inProgress: Int {
        condition.withLock { running + queued }
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

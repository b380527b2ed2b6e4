import Foundation

/// A bound on one piece of work: a time limit counted only while it computes (not while it
/// waits its turn or for a slow receiver), and a
/// cancellation any thread may ask for (the data server cancels when the client goes). Long
/// loops call ``check()`` now and then; it throws once the time is up or the work is cancelled.
///
/// ```swift
/// let limit = WorkLimit(timeLimit: .seconds(30))
/// for (index, row) in rows.enumerated() {
///     if index % 1024 == 0 { try limit.check() }
///     …
/// }
/// // Waiting for a slow receiver does not count against the limit:
/// try limit.excluding { try send(batch) }
/// ```
public final class WorkLimit: @unchecked Sendable {
    // @unchecked Sendable: `deadline` and `cancelled` are read and written only while `lock` is held;
    // `timeLimit` is a constant.
    /// How long the work may compute (nil: no limit, only cancellation).
    public let timeLimit: Duration?
    private let lock = NSLock()
    private var deadline: ContinuousClock.Instant?
    private var cancelled = false
    private let cancelledWhen: (@Sendable () -> Bool)?

    /// A limit whose time starts now; `cancelledWhen`, asked at each check, cancels the work
    /// when it answers true (the data server asks whether the client is still connected).
    public init(timeLimit: Duration?, cancelledWhen: (@Sendable () -> Bool)? = nil) {
        self.timeLimit = timeLimit
        self.cancelledWhen = cancelledWhen
        deadline = timeLimit.map { ContinuousClock.now + $0 }
    }

    /// Thrown by ``check()`` once the work has computed for longer than its ``timeLimit``.
    public struct Exceeded: Error, Sendable, CustomStringConvertible {
        public let timeLimit: Duration
        public var description: String { "the work ran longer than its time limit (\(timeLimit)) and was stopped" }
    }

    /// Asks the work to stop: its next ``check()`` throws `CancellationError`.
    public func cancel() {
        lock.withLock { cancelled = true }
    }

    /// Whether ``cancel()`` was called or the condition given at creation holds.
    public var isCancelled: Bool {
        if lock.withLock({ cancelled }) { return true }
        guard let cancelledWhen, cancelledWhen() else { return false }
        cancel()
        return true
    }

    /// Whether the time is up (cancellation aside).
    public var isExpired: Bool {
        lock.withLock { deadline.map { ContinuousClock.now > $0 } ?? false }
    }

    /// Throws `CancellationError` once cancelled, ``Exceeded`` once the time is up.
    public func check() throws {
        if isCancelled { throw CancellationError() }
        if isExpired, let timeLimit { throw Exceeded(timeLimit: timeLimit) }
    }

    /// The time left before the deadline (nil without a time limit).
    public var remaining: Duration? {
        lock.withLock { deadline.map { max($0 - ContinuousClock.now, .zero) } }
    }

    /// Leaves the time since `start` out of the limit: time the work spent waiting its turn
    /// (for a database reader, a rule runtime) rather than computing.
    public func notCounting(since start: ContinuousClock.Instant) {
        let waited = ContinuousClock.now - start
        lock.withLock { deadline = deadline.map { $0 + waited } }
    }

    /// Runs `work` — waiting for someone else, such as a slow receiver — without counting its
    /// time against the limit.
    public func excluding<Result>(_ work: () throws -> Result) rethrows -> Result {
        let start = ContinuousClock.now
        defer { notCounting(since: start) }
        return try work()
    }
}

import Foundation

extension ScriptEngine {
    /// How many scripts the time limit has stopped in this process, in every engine, since the
    /// process started — what a server's metrics report as time-limit stops.
    ///
    /// ```swift
    /// let before = ScriptEngine.timeLimitStops
    /// // … a rule loops for ever and is stopped …
    /// assert(ScriptEngine.timeLimitStops == before + 1)
    /// ```
    public static var timeLimitStops: Int { TimeLimitStops.shared.count }
}

/// The process-wide count behind ``ScriptEngine/timeLimitStops``.
final class TimeLimitStops: @unchecked Sendable {
    // @unchecked Sendable: `stops` is read and written only while `lock` is held.
    static let shared = TimeLimitStops()
    private let lock = NSLock()
    private var stops = 0

    var count: Int { lock.withLock { stops } }

    func note() { lock.withLock { stops += 1 } }
}

import Foundation
import RelataServerTestSupport

/// Bytes one thread appends and another reads after it finished.
final class LineBuffer: @unchecked Sendable {
    // @unchecked Sendable: `data` is only read and written under `lock`.
    private let lock = NSLock()
    private var data = Data()
    func append(_ bytes: Data) { lock.withLock { data.append(bytes) } }
    var text: String { lock.withLock { String(decoding: data, as: UTF8.self) } }
}

/// What a process writes to a pipe, read as it comes by a thread of its own, so a test can wait
/// (with a deadline) for a line while the process runs, and read everything once it stopped.
final class ProcessLog: @unchecked Sendable {
    // @unchecked Sendable: `data` and `ended` are only read and written under `condition`.
    private let condition = NSCondition()
    private var data = Data()
    private var ended = false

    /// Starts reading `handle` until its end.
    func collect(from handle: FileHandle) {
        Thread { [self] in
            while true {
                let chunk = handle.availableData
                condition.withLock {
                    if chunk.isEmpty { ended = true } else { data.append(chunk) }
                    condition.broadcast()
                }
                if chunk.isEmpty { return }
            }
        }.start()
    }

    var text: String { condition.withLock { String(decoding: data, as: UTF8.self) } }

    /// Waits (blocking the thread) until the log holds `text`; false when it ended or `limit`
    /// passed first.
    func wait(for text: String, within limit: Duration) -> Bool {
        waitUntil(within: limit) { String(decoding: $0.data, as: UTF8.self).contains(text) }
    }

    /// Waits (blocking the thread) until the process closed the pipe; whether it did within `limit`.
    func waitForEnd(within limit: Duration) -> Bool {
        waitUntil(within: limit) { $0.ended }
    }

    private func waitUntil(within limit: Duration, _ done: (ProcessLog) -> Bool) -> Bool {
        let (seconds, attoseconds) = limit.components
        let deadline = Date(timeIntervalSinceNow: Double(seconds) + Double(attoseconds) / 1e18)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if done(self) { return true }
            if ended || !condition.wait(until: deadline) { return done(self) }
        }
    }
}

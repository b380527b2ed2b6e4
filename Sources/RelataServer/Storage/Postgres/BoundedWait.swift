import Foundation
import NIOCore

extension EventLoopFuture {
    /// Waits on the calling thread (never an event loop) for the future's value, for at most
    /// `limit`: nil when it has not completed by then. postgres-nio's own `wait()` waits for
    /// ever, and an answer PostgreSQL never sends must not hold a thread for ever.
    ///
    /// ```swift
    /// guard let result = try connection.query(query, logger: logger).wait(atMost: .seconds(5)) else { … }
    /// ```
    func wait(atMost limit: Duration) throws -> Value? {
        let outcome = Outcome<Value>()
        whenComplete { outcome.set($0) }
        guard outcome.done.wait(timeout: .now() + .nanoseconds(Int(limit.timeAmount.nanoseconds))) == .success else { return nil }
        return try outcome.result?.get()
    }
}

/// A future's result, handed from the event loop to the waiting thread.
private final class Outcome<Value>: @unchecked Sendable {
    // @unchecked Sendable: `result` is written once, before `done` is signalled, and read only after
    // the wait on `done` succeeded (the semaphore orders the two).
    var result: Result<Value, any Error>?
    let done = DispatchSemaphore(value: 0)

    func set(_ result: Result<Value, any Error>) {
        self.result = result
        done.signal()
    }
}

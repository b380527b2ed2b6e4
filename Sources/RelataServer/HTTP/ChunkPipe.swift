import Foundation

/// Hands chunks of an answer from a reading thread to the task writing the response,
/// holding at most `capacity` chunks: when the client reads slowly the reader blocks
/// (its database read waits with it) instead of the server buffering the whole answer.
///
/// ```swift
/// let pipe = ChunkPipe(capacity: 8)
/// // reading thread:  try pipe.send(bytes) … pipe.finish(sending: lastBytes)
/// // writing task:    while let chunk = try await pipe.next() { try await writer.write(chunk) }
/// ```
final class ChunkPipe: @unchecked Sendable {
    // @unchecked Sendable: every stored property but `capacity` is read and written only while
    // `condition` is locked.
    private let capacity: Int
    private let patience: TimeInterval
    private let isAbandoned: @Sendable () -> Bool
    private let condition = NSCondition()
    private var queued: [[UInt8]] = []
    /// How the chunks ended: nil while more may come.
    private var end: Result<Void, any Error>?
    /// The writer waiting in ``next()`` for a chunk.
    private var waiter: CheckedContinuation<[UInt8]?, any Error>?
    private var closed = false

    /// - Parameters:
    ///   - patience: how long a sender waits for room before it gives up (the writer stopped taking chunks).
    ///   - isAbandoned: asked while a sender waits; true ends the wait (the client has gone).
    init(capacity: Int, patience: Duration = .seconds(60), isAbandoned: @escaping @Sendable () -> Bool = { false }) {
        self.capacity = capacity
        self.patience = patience.seconds
        self.isAbandoned = isAbandoned
    }

    /// Queues a chunk, blocking while `capacity` chunks wait to be written — call it from a
    /// thread that may block (a database reader's), never from a task. It waits at most
    /// `patience`, and not once `isAbandoned` says the client has gone: a reader is never
    /// held by an answer nobody will take.
    ///
    /// - Throws: `CancellationError` once the writer is gone (the client disconnected), or it
    ///   took no chunk for `patience`.
    func send(_ bytes: [UInt8]) throws {
        condition.lock()
        let deadline = Date(timeIntervalSinceNow: patience)
        while queued.count >= capacity, !closed {
            if !condition.wait(until: min(deadline, Date(timeIntervalSinceNow: 0.5))), isAbandoned() || Date() >= deadline {
                closed = true
                queued = []
            }
        }
        guard !closed else {
            condition.unlock()
            throw CancellationError()
        }
        deliver(bytes)
    }

    /// Queues the last chunk and ends the chunks in one step: a writer that takes it finds
    /// ``isDrained`` true, and may send it as the whole answer.
    func finish(sending last: [UInt8]) {
        condition.lock()
        guard !closed, end == nil else { return condition.unlock() }
        end = .success(())
        deliver(last)
    }

    /// Whether every chunk was taken and the chunks ended without an error.
    var isDrained: Bool {
        condition.lock()
        defer { condition.unlock() }
        guard queued.isEmpty, !closed, case .success = end else { return false }
        return true
    }

    /// Hands `bytes` to a waiting writer or queues them; unlocks `condition`.
    private func deliver(_ bytes: [UInt8]) {
        if let waiter {
            self.waiter = nil
            condition.unlock()
            waiter.resume(returning: bytes)
        } else {
            queued.append(bytes)
            condition.unlock()
        }
    }

    /// No more chunks; with an error, ``next()`` throws it after the chunks sent.
    func finish(throwing error: (any Error)? = nil) {
        condition.lock()
        guard end == nil else { return condition.unlock() }
        end = error.map { .failure($0) } ?? .success(())
        let waiting = waiter
        waiter = nil
        condition.unlock()
        if let waiting { Self.resume(waiting, at: end) }
    }

    /// The next chunk, waiting for it; nil after the last.
    ///
    /// - Throws: the error the reader finished with, or `CancellationError` when the pipe was
    ///   closed or the waiting task cancelled.
    func next() async throws -> [UInt8]? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                condition.lock()
                if !queued.isEmpty {
                    let bytes = queued.removeFirst()
                    condition.signal()
                    condition.unlock()
                    continuation.resume(returning: bytes)
                } else if closed {
                    condition.unlock()
                    continuation.resume(throwing: CancellationError())
                } else if let end {
                    condition.unlock()
                    Self.resume(continuation, at: end)
                } else {
                    waiter = continuation
                    condition.unlock()
                }
            }
        } onCancel: {
            close()
        }
    }

    /// The writer is gone: a blocked sender wakes, every later send fails, and a waiting
    /// ``next()`` throws `CancellationError`.
    func close() {
        condition.lock()
        closed = true
        queued = []
        let waiting = waiter
        waiter = nil
        condition.broadcast()
        condition.unlock()
        waiting?.resume(throwing: CancellationError())
    }

    private static func resume(_ continuation: CheckedContinuation<[UInt8]?, any Error>, at end: Result<Void, any Error>?) {
        switch end {
        case .failure(let error): continuation.resume(throwing: error)
        case .success, nil: continuation.resume(returning: nil)
        }
    }
}

import Foundation

/// Hands chunks of an answer from a reading thread to the task writing the response,
/// holding at most `capacity` chunks: when the client reads slowly the reader blocks
/// (its database read waits with it) instead of the server buffering the whole answer.
///
/// ```swift
/// let pipe = ChunkPipe(capacity: 8)
/// // reading thread:  try pipe.send(bytes) … pipe.finish()
/// // writing task:    for try await chunk in pipe.chunks { try await writer.write(chunk); pipe.didWrite() }
/// ```
final class ChunkPipe: @unchecked Sendable {
    // @unchecked Sendable: `waiting` and `closed` are read and written only while `condition`
    // is locked; the stream and its continuation are Sendable.
    let chunks: AsyncThrowingStream<[UInt8], any Error>
    private let continuation: AsyncThrowingStream<[UInt8], any Error>.Continuation
    private let capacity: Int
    private let condition = NSCondition()
    /// Chunks sent and not yet written.
    private var waiting = 0
    private var closed = false

    init(capacity: Int) {
        (chunks, continuation) = AsyncThrowingStream.makeStream()
        self.capacity = capacity
        continuation.onTermination = { [weak self] _ in self?.close() }
    }

    /// Queues a chunk, blocking while `capacity` chunks wait to be written — call it from a
    /// thread that may block (a database reader's), never from a task.
    ///
    /// - Throws: `CancellationError` once the writer is gone (the client disconnected).
    func send(_ bytes: [UInt8]) throws {
        condition.lock()
        defer { condition.unlock() }
        while waiting >= capacity, !closed { condition.wait() }
        guard !closed else { throw CancellationError() }
        waiting += 1
        continuation.yield(bytes)
    }

    /// Queues a small chunk (a stream's start or end) without waiting for room: safe from a task.
    func sendWithoutWaiting(_ bytes: [UInt8]) {
        condition.withLock {
            guard !closed else { return }
            waiting += 1
            continuation.yield(bytes)
        }
    }

    /// The writer wrote a chunk: one more may wait.
    func didWrite() {
        condition.withLock {
            waiting -= 1
            condition.signal()
        }
    }

    /// No more chunks; with an error, the writer's loop throws it after the chunks sent.
    func finish(throwing error: (any Error)? = nil) {
        continuation.finish(throwing: error)
    }

    /// The writer is gone: a blocked sender wakes and every later send fails.
    func close() {
        condition.withLock {
            closed = true
            condition.broadcast()
        }
    }
}

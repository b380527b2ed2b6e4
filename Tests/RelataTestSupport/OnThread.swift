import Foundation
import Synchronization

/// Work started at once on a thread of its own (never waiting for one of Swift's cooperative
/// threads), whose result a test awaits later.
///
/// A test that blocks — on a process, a lock, a flag another thread sets — blocks here, not on
/// a cooperative thread: the pool has as many threads as the machine has cores, and tests
/// running beside would wait for it.
///
/// ```swift
/// let write = OnThread { try database.groupedWrite { … } }
/// release.set()
/// let commit = try await write.value
/// ```
public final class OnThread<Value: Sendable>: Sendable {
    private let state = Mutex<(result: Result<Value, any Error>?, waiting: CheckedContinuation<Value, any Error>?)>((nil, nil))

    public init(_ work: @escaping @Sendable () throws -> Value) {
        Thread { [self] in
            let result = Result { try work() }
            let waiting = state.withLock { state in
                state.result = result
                return state.waiting
            }
            waiting?.resume(with: result)
        }.start()
    }

    /// What the work returned or threw, once it has ended.
    public var value: Value {
        get async throws {
            try await withCheckedThrowingContinuation { continuation in
                let result: Result<Value, any Error>? = state.withLock { state in
                    if state.result == nil { state.waiting = continuation }
                    return state.result
                }
                if let result { continuation.resume(with: result) }
            }
        }
    }
}

/// Runs `work`, which blocks, on a thread of its own and awaits it without holding one of
/// Swift's cooperative threads.
///
/// ```swift
/// let exited = try await onOwnThread { try runToTheEnd(process) }
/// ```
public func onOwnThread<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

/// Runs `work`, which blocks, on a thread of its own and awaits it without holding one of
/// Swift's cooperative threads.
public func onOwnThread<Value: Sendable>(_ work: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: work()) }.start()
    }
}

extension ConditionFlag {
    /// Waits as ``wait(for:)`` does, on a thread of its own: the awaiting task holds none of
    /// Swift's cooperative threads meanwhile.
    public func waited(for limit: Duration) async -> Bool {
        await onOwnThread { self.wait(for: limit) }
    }
}

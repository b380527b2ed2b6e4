import Foundation
@testable import RelataServer
import RelataServerTestSupport
import RelataTestSupport
import Testing

/// Blocking work runs on threads of its own, each call at once: never on the cooperative pool's
/// threads, never behind another blocked call; the threads are bounded, end when idle, and run
/// waiting work in order.
@Suite(.timeLimit(.minutes(1))) struct OffCooperativePoolTests {
    /// Each of 16 calls that block starts on a thread at once: none waits for another to end,
    /// nor for a thread of the cooperative pool. (On a concurrent Dispatch queue, all but the
    /// first two waited a second for Dispatch to add a thread — and while they blocked, so did
    /// every task of the process.)
    @Test func blockedCallsEachStartAtOnce() async throws {
        let release = ConditionFlag()
        defer { release.set() }
        let delays = Delays()
        let calls = (0..<16).map { _ in
            Task {
                let submitted = ContinuousClock.now
                return try await OffCooperativePool.run {
                    delays.add(ContinuousClock.now - submitted)
                    return release.wait(for: .seconds(30))
                }
            }
        }
        let deadline = ContinuousClock.now + .seconds(30)
        while delays.all.count < 16, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let longest = delays.all.max() ?? .seconds(30)
        #expect(delays.all.count == 16)
        #expect(longest < .milliseconds(500), "the slowest of 16 blocked calls started \(longest) after it was made")
        release.set()
        for call in calls { #expect(try await call.value) }
    }

    final class Delays: @unchecked Sendable {
        // @unchecked Sendable: `values` is read and written only while `lock` is held.
        private let lock = NSLock()
        private var values: [Duration] = []
        func add(_ delay: Duration) { lock.withLock { values.append(delay) } }
        var all: [Duration] { lock.withLock { values } }
    }

    @Test func threadsAreBoundedRunWaitingWorkAndEndWhenIdle() async throws {
        let threads = BlockingThreads(limit: 2, idleLifetime: 0.2)
        let release = ConditionFlag()
        let blocked = (0..<2).map { _ in Task { try await threads.run { release.wait(for: .seconds(30)) } } }
        let waiting = Task { try await threads.run { 7 } }
        // Both threads are blocked: the third call waits.
        try await Task.sleep(for: .milliseconds(200))
        #expect(threads.threadCount == 2)
        release.set()
        #expect(try await waiting.value == 7)
        for call in blocked { #expect(try await call.value) }
        let deadline = ContinuousClock.now + .seconds(20)
        while threads.threadCount > 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(threads.threadCount == 0, "idle threads end")
        #expect(try await threads.run { 8 } == 8, "a thread starts again for new work")
    }
}

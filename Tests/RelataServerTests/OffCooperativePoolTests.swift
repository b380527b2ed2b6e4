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
                let submitted = delays.submitted()
                return try await OffCooperativePool.run {
                    delays.add(ContinuousClock.now - submitted)
                    return release.wait(for: .seconds(30))
                }
            }
        }
        // The calls' tasks start when the cooperative pool gets to them, which on a loaded
        // machine may be many seconds: each delay counts from its call, and the calls have 30
        // seconds from the last of them to start.
        let deadline = ContinuousClock.now + .seconds(120)
        while delays.all.count < 16, ContinuousClock.now < deadline, !delays.made(16, before: ContinuousClock.now - .seconds(30)) {
            try await Task.sleep(for: .milliseconds(20))
        }
        let longest = delays.all.max() ?? .seconds(30)
        #expect(delays.all.count == 16)
        #expect(longest < .milliseconds(500), "the slowest of 16 blocked calls started \(longest) after it was made")
        release.set()
        for call in calls { #expect(try await call.value) }
    }

    final class Delays: @unchecked Sendable {
        // @unchecked Sendable: every variable is read and written only while `lock` is held.
        private let lock = NSLock()
        private var values: [Duration] = []
        private var calls = 0
        private var lastCall: ContinuousClock.Instant?
        func add(_ delay: Duration) { lock.withLock { values.append(delay) } }
        var all: [Duration] { lock.withLock { values } }
        /// Notes a call made now, and returns the time.
        func submitted() -> ContinuousClock.Instant {
            let now = ContinuousClock.now
            lock.withLock {
                calls += 1
                lastCall = max(lastCall ?? now, now)
            }
            return now
        }
        /// Whether `count` calls were made, the last of them before `instant`.
        func made(_ count: Int, before instant: ContinuousClock.Instant) -> Bool {
            lock.withLock { calls >= count && lastCall.map { $0 < instant } == true }
        }
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

import Foundation
@testable import RelataServer
import RelataServerTestSupport
import RelataTestSupport
import Testing

/// The deadlines of request bodies: met, at most a sweep late; never met once removed; and the
/// sweeping starts again after it stopped for want of deadlines.
@Suite(.timeLimit(.minutes(1))) struct BodyDeadlinesTests {
    @Test func aDeadlineIsMetAndARemovedOneNever() async throws {
        let deadlines = BodyDeadlines(interval: .milliseconds(20))
        for round in 0..<2 {   // the second round starts the sweeping again, after it ended
            let met = ConditionFlag(), removed = ConditionFlag()
            let started = ContinuousClock.now
            _ = deadlines.add(after: .milliseconds(100)) { met.set() }
            let forgotten = deadlines.add(after: .milliseconds(50)) { removed.set() }
            deadlines.remove(forgotten)
            #expect(await Self.becomes(met), "round \(round): the deadline was met")
            #expect(ContinuousClock.now - started >= .milliseconds(100), "round \(round): not before its time")
            #expect(!removed.isSet, "round \(round): a removed deadline is never met")
            #expect(deadlines.count == 0)
            // Nothing pending: the sweeping ends at its next look.
            try await Task.sleep(for: .milliseconds(60))
        }
    }

    @Test func manyDeadlinesAreEachMetOnce() async throws {
        let deadlines = BodyDeadlines(interval: .milliseconds(10))
        let calls = Counter()
        for index in 0..<200 {
            _ = deadlines.add(after: .milliseconds(Int64(index % 20) * 5)) { calls.add() }
        }
        let deadline = ContinuousClock.now + .seconds(30)
        while calls.value < 200, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(50))
        #expect(calls.value == 200)
    }

    /// Waits (polling, at most 30 s) for a flag.
    static func becomes(_ flag: ConditionFlag) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while !flag.isSet, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
        return flag.isSet
    }

    final class Counter: @unchecked Sendable {
        // @unchecked Sendable: `count` is read and written only while `lock` is held.
        private let lock = NSLock()
        private var count = 0
        func add() { lock.withLock { count += 1 } }
        var value: Int { lock.withLock { count } }
    }
}

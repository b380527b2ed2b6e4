import Foundation
@testable import RelataServer
import Testing

/// The lanes a SQLite database's asynchronous reads and other blocking work run on: never more
/// at once than the limit (a database's reader connections), every job run, a job's error its
/// caller's, and a job that takes long holding up only its own lane.
@Suite(.timeLimit(.minutes(10))) struct BlockingLanesTests {
    /// How many jobs run now, and the most that ever ran at once.
    final class Gauge: @unchecked Sendable {
        // @unchecked Sendable: `now` and `most` are read and written only while `lock` is held.
        private let lock = NSLock()
        private var now = 0
        private(set) var most = 0

        func during<T>(_ work: () throws -> T) rethrows -> T {
            lock.withLock { now += 1; most = max(most, now) }
            defer { lock.withLock { now -= 1 } }
            return try work()
        }
    }

    @Test func atMostItsLimitRunAtOnceAndEveryJobRuns() async throws {
        let threads = BlockingLanes(limit: 3, label: "test.reads")
        let gauge = Gauge()
        let results = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<200 {
                group.addTask {
                    try await threads.run {
                        gauge.during {
                            // Work long enough that jobs overlap.
                            var total = 0
                            for step in 0..<20_000 { total &+= step ^ index }
                            return index + (total == -1 ? 1 : 0)
                        }
                    }
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(results.sorted() == Array(0..<200))
        #expect(gauge.most <= 3, "\(gauge.most) ran at once")
    }

    /// Each lane makes its resource on its first job and keeps it; a resource that cannot be
    /// made fails that job only, and the lane's next job tries again.
    @Test func eachLaneKeepsTheResourceItMadeAndRetriesOneItCouldNot() async throws {
        final class Made: @unchecked Sendable {
            // @unchecked Sendable: `count` is read and written only while `lock` is held.
            private let lock = NSLock()
            private var count = 0
            func next() -> Int { lock.withLock { count += 1; return count } }
            var total: Int { lock.withLock { count } }
        }
        struct Unavailable: Error {}
        let made = Made()
        let lanes = BlockingLanes<Int>(limit: 1, label: "test.reads") {
            let number = made.next()
            if number == 1 { throw Unavailable() }
            return number
        }
        await #expect(throws: Unavailable.self) { try await lanes.run { $0 } }
        for _ in 0..<5 {
            #expect(try await lanes.run { $0 } == 2, "the second attempt's resource, kept")
        }
        #expect(made.total == 2)
    }

    @Test func aJobsErrorIsItsCallersAndTheQueueGoesOn() async throws {
        struct Refused: Error {}
        let threads = BlockingLanes(limit: 1, label: "test.reads")
        await #expect(throws: Refused.self) { try await threads.run { () throws -> Int in throw Refused() } }
        #expect(try await threads.run { 7 } == 7)
    }

    @Test func aLongJobHoldsUpOnlyItsOwnPlace() async throws {
        let threads = BlockingLanes(limit: 2, label: "test.reads")
        let release = DispatchSemaphore(value: 0)
        let gauge = Gauge()
        let long = Task { try await threads.run { gauge.during { release.wait() }; return 0 } }
        try #require(await eventually(within: .seconds(10)) { gauge.most == 1 }, "the long job runs")
        // While the long job holds one place, a hundred others run in the other.
        for index in 0..<100 {
            #expect(try await threads.run { index } == index)
        }
        release.signal()
        #expect(try await long.value == 0)
    }
}

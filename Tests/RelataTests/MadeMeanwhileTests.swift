import Foundation
import Synchronization
import Testing
@testable import Relata

/// A value made on another thread while the caller works: the same value, or the same error,
/// to every caller, however many and from whichever thread; small work made on the spot.
@Suite(.timeLimit(.minutes(1))) struct MadeMeanwhileTests {
    struct Refused: Error, Equatable {}

    @Test func largeWorkIsMadeOnAnotherThreadAndWaitedFor() throws {
        let caller = pthread_self()
        let ranHere = Mutex<Bool?>(nil)
        let release = DispatchSemaphore(value: 0)
        let made = MadeMeanwhile(coveringChanges: changesWorthAThread) {
            ranHere.withLock { $0 = pthread_equal(pthread_self(), caller) != 0 }
            release.wait()   // still being made when init returns: value() must wait for it
            return 42
        }
        #expect(ranHere.withLock { $0 } != true, "init did not make it on its own thread")
        release.signal()
        #expect(try made.value() == 42)
        #expect(ranHere.withLock { $0 } == false)
        #expect(try made.value() == 42, "asked again, the same")
    }

    @Test func smallWorkIsMadeOnTheSpot() throws {
        let runs = Mutex(0)
        let made = MadeMeanwhile(coveringChanges: changesWorthAThread - 1) {
            runs.withLock { $0 += 1 }
            return "done"
        }
        #expect(runs.withLock { $0 } == 1, "made before init returned")
        #expect(try made.value() == "done" && made.value() == "done")
        #expect(runs.withLock { $0 } == 1, "made once")
    }

    @Test(arguments: [1, changesWorthAThread])
    func anErrorReachesEveryCaller(changes: Int) async throws {
        let made = MadeMeanwhile<Int>(coveringChanges: changes) { throw Refused() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { #expect(throws: Refused()) { try made.value() } }
            }
            try await group.waitForAll()
        }
    }

    @Test func manyCallersOnManyThreadsGetTheOneValue() async throws {
        let runs = Mutex(0)
        let made = MadeMeanwhile(coveringChanges: changesWorthAThread * 10) {
            runs.withLock { $0 += 1 }
            return (0..<100_000).reduce(0, +)
        }
        let seen = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 { group.addTask { try made.value() } }
            return try await group.reduce(into: Set<Int>()) { $0.insert($1) }
        }
        #expect(seen == [4_999_950_000])
        #expect(runs.withLock { $0 } == 1)
    }
}

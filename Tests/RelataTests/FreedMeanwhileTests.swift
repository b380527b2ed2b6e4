import Foundation
import Synchronization
import Testing
@testable import Relata

/// A large value given up meanwhile is freed on another thread; a small one at once, here.
@Suite struct FreedMeanwhileTests {
    /// Tells, as it is freed, which thread freed it.
    final class Tracked: Sendable {
        let freed: @Sendable (pthread_t) -> Void
        init(_ freed: @escaping @Sendable (pthread_t) -> Void) { self.freed = freed }
        deinit { freed(pthread_self()) }
    }

    @Test func aLargeValueIsFreedOnAnotherThreadSoon() {
        let freedBy = Mutex<pthread_t?>(nil), done = DispatchSemaphore(value: 0)
        FreedMeanwhile.free(Tracked { thread in
            freedBy.withLock { $0 = thread }
            done.signal()
        }, coveringChanges: changesWorthAThread)
        #expect(done.wait(timeout: .now() + 30) == .success, "the value was freed")
        let thread = freedBy.withLock { $0 }
        #expect(thread != nil && pthread_equal(thread!, pthread_self()) == 0, "freed on another thread")
    }

    @Test func aSmallValueIsFreedHereBeforeFreeReturns() {
        let freedBy = Mutex<pthread_t?>(nil)
        FreedMeanwhile.free(Tracked { thread in freedBy.withLock { $0 = thread } }, coveringChanges: changesWorthAThread - 1)
        let thread = freedBy.withLock { $0 }
        #expect(thread != nil && pthread_equal(thread!, pthread_self()) != 0, "freed here, at once")
    }
}

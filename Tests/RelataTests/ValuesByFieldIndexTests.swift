import Foundation
import Testing
@testable import Relata

/// A record's values by field index, walked in field order as a post commits them.
@Suite struct ValuesByFieldIndexTests {
    func keysInOrder(_ values: ValuesByFieldIndex) -> [Int] {
        var keys: [Int] = []
        values.forEachInKeyOrder { key, _ in keys.append(key) }
        return keys
    }

    @Test func walksEveryEntryInKeyOrderWhateverTheOrderTheyWereSet() {
        #expect(keysInOrder([:]).isEmpty)
        #expect(keysInOrder([4: .integer(1)]) == [4])
        #expect(keysInOrder([1: .integer(1), 3: .integer(3)]) == [1, 3])
        #expect(keysInOrder([3: .integer(3), 1: .integer(1)]) == [1, 3])
        #expect(keysInOrder([5: .null, 0: .null, 9: .null, 2: .null]) == [0, 2, 5, 9])
    }

    @Test func givesEachKeyItsOwnValue() {
        var values: ValuesByFieldIndex = [7: .string("seven"), 2: .string("two")]
        values[7] = .string("SEVEN")   // set again: still one entry
        var seen: [String] = []
        values.forEachInKeyOrder { key, value in seen.append("\(key)=\(value.text)") }
        #expect(seen == ["2=two", "7=SEVEN"])
    }
}

/// Rules' work is marked on the thread that runs it, and only there.
@Suite struct RuleScopeTests {
    @Test func marksItsBodyAndNestedRunsAndEndsWithIt() {
        #expect(!RuleScope.isActive)
        RuleScope.run {
            #expect(RuleScope.isActive)
            RuleScope.run { #expect(RuleScope.isActive) }
            #expect(RuleScope.isActive, "a nested run does not end the outer one")
        }
        #expect(!RuleScope.isActive)
    }

    @Test func endsWhenItsBodyThrows() {
        struct Refused: Error {}
        #expect(throws: Refused.self) { try RuleScope.run { throw Refused() } }
        #expect(!RuleScope.isActive)
    }

    @Test func isNotSeenByAnotherThread() {
        let seenElsewhere = NSLock(), done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var otherSaw: Bool?   // written by the other thread before `done` is signalled
        RuleScope.run {
            Thread.detachNewThread {
                seenElsewhere.withLock { otherSaw = RuleScope.isActive }
                done.signal()
            }
            #expect(done.wait(timeout: .now() + 30) == .success, "the other thread answered")
        }
        #expect(seenElsewhere.withLock { otherSaw } == false)
    }
}

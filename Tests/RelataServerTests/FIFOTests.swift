@testable import RelataServer
import Testing

/// The waiting queue of the read lanes and the blocking threads: first in, first out, across
/// appends interleaved with takes.
struct FIFOTests {
    @Test func elementsLeaveInTheOrderTheyCame() {
        var queue = FIFO<Int>()
        #expect(queue.isEmpty)
        #expect(queue.popFirst() == nil)
        var taken: [Int] = [], next = 0
        // Appends and takes interleaved in uneven runs: the order must hold across the
        // moments the taking side runs out and is refilled from the appending side.
        for round in 1...20 {
            for _ in 0..<(round % 7) { queue.append(next); next += 1 }
            for _ in 0..<(round % 5) { if let element = queue.popFirst() { taken.append(element) } }
        }
        while let element = queue.popFirst() { taken.append(element) }
        #expect(taken == Array(0..<next))
        #expect(queue.isEmpty)
    }
}

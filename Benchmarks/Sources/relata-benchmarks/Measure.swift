import Foundation
import CBenchmarkSupport

/// The median wall-clock time of `repetitions` runs, in seconds.
func measure(repetitions: Int = 5, _ body: () throws -> Void) rethrows -> Double {
    try times(repetitions: repetitions, body)[repetitions / 2]
}

/// The wall-clock times of `repetitions` runs, in seconds, fastest first.
func times(repetitions: Int, _ body: () throws -> Void) rethrows -> [Double] {
    var times: [Double] = []
    for _ in 0..<max(repetitions, 1) {
        let start = ContinuousClock.now
        try body()
        let elapsed = ContinuousClock.now - start
        times.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
    return times.sorted()
}

/// Bytes the process has allocated on the heap and not freed.
func heapBytesInUse() -> Int {
    #if os(Linux)
    let info = mallinfo2()
    return Int(info.uordblks) + Int(info.hblkhd)   // small blocks + mmapped large ones
    #else
    return 0
    #endif
}

func milliseconds(_ seconds: Double) -> String { String(format: "%.1f ms", seconds * 1000) }
func ratio(_ a: Double, _ b: Double) -> String { String(format: "%.2f×", a / b) }

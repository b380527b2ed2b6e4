/// A first-in, first-out queue of waiting work: appended to one array, taken from another
/// (the first reversed when the second runs out), so both ends cost O(1) amortized.
///
/// ```swift
/// var waiting = FIFO<String>()
/// waiting.append("a"); waiting.append("b")
/// waiting.popFirst()   // "a"
/// ```
struct FIFO<Element> {
    private var arrived: [Element] = []
    private var next: [Element] = []

    /// Whether nothing waits.
    var isEmpty: Bool { arrived.isEmpty && next.isEmpty }

    /// Adds `element` behind everything that waits.
    mutating func append(_ element: Element) {
        arrived.append(element)
    }

    /// Takes the element that has waited longest, if any.
    mutating func popFirst() -> Element? {
        if next.isEmpty {
            next = arrived.reversed()
            arrived = []
        }
        return next.popLast()
    }
}

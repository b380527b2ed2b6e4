/// The slots of ``FieldNames`` lists in the order of their names, for the few lists met last:
/// a writer that puts values in name order (the JSON, the fingerprint) sorts each list of a
/// delta once — its changes' values share one, their edits' another — not each change's values.
///
/// ```swift
/// var order = SortedFieldNames()
/// for slot in order.slots(of: change.newValues.names) { … change.newValues.value(at: slot) … }
/// ```
package struct SortedFieldNames {
    private var recent: [(names: FieldNames, sorted: [Int])] = []
    private var next = 0
    private static let kept = 4

    package init() {}

    /// `names`' slots, their names in ascending order.
    package mutating func slots(of names: FieldNames) -> [Int] {
        for entry in recent where entry.names === names { return entry.sorted }
        let sorted = names.positionsInNameOrder()
        if recent.count < Self.kept {
            recent.append((names, sorted))
        } else {
            recent[next] = (names, sorted)
            next = (next + 1) % Self.kept
        }
        return sorted
    }
}

/// Where each change of a sent delta is, by change id, for matching an answer's changes back to
/// the changes sent: a change is usually where it was sent, so the positions by id are built
/// only once one is not.
///
/// ```swift
/// var sent = SentChangePositions(of: batch)
/// if let position = sent.position(of: answer.changes[index].changeId, near: index) { … }
/// ```
package struct SentChangePositions {
    private let sent: Delta
    private var byId: [Int: Int]?

    package init(of sent: Delta) {
        self.sent = sent
    }

    /// The position in the sent delta of the change with id `id`, looked for at `index` first;
    /// nil when the sent delta has no such change.
    package mutating func position(of id: Int, near index: Int) -> Int? {
        if index >= 0, index < sent.changes.count, sent.changes[index].changeId == id { return index }
        if byId == nil {
            var positions: [Int: Int] = [:]
            positions.reserveCapacity(sent.changes.count)
            for position in sent.changes.indices { positions[sent.changes[position].changeId] = position }   // no change copied
            byId = positions
        }
        return byId?[id]
    }
}

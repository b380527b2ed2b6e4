import Relata

extension Delta {
    /// Puts back the values a minimal UpdateData answer (`Prefer: return=minimal`) left out:
    /// a change answered with neither old nor new values gets those of the change it answers in
    /// `sent`. What the server made of the change stays: its status, message, failure and
    /// refreshed values (the values the server stored where they differ from what was sent).
    /// A full answer is left as it is: every change it carries has values.
    mutating func restoreValuesLeftOut(from sent: Delta) {
        var sentPosition: [Int: Int]?   // built only when the answer is not in the batch's order
        for index in changes.indices where changes[index].oldValues.isEmpty && changes[index].newValues.isEmpty {
            let changeId = changes[index].changeId
            var position = index
            if index >= sent.changes.count || sent.changes[index].changeId != changeId {
                if sentPosition == nil {
                    var positions: [Int: Int] = [:]
                    positions.reserveCapacity(sent.changes.count)
                    for position in sent.changes.indices { positions[sent.changes[position].changeId] = position }
                    sentPosition = positions
                }
                guard let found = sentPosition?[changeId] else { continue }
                position = found
            }
            changes[index].oldValues = sent.changes[position].oldValues
            changes[index].newValues = sent.changes[position].newValues
        }
    }
}

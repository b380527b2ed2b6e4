import Relata

extension Delta {
    /// Puts back the values a minimal UpdateData answer (`Prefer: return=minimal`) left out:
    /// a change answered with neither old nor new values gets those of the change it answers in
    /// `sent`. What the server made of the change stays: its status, message, failure and
    /// refreshed values (the values the server stored where they differ from what was sent).
    /// A full answer is left as it is: every change it carries has values.
    mutating func restoreValuesLeftOut(from sent: Delta) {
        var positions = SentChangePositions(of: sent)
        for index in changes.indices where changes[index].oldValues.isEmpty && changes[index].newValues.isEmpty {
            guard let position = positions.position(of: changes[index].changeId, near: index) else { continue }
            changes[index].oldValues = sent.changes[position].oldValues
            changes[index].newValues = sent.changes[position].newValues
        }
    }
}

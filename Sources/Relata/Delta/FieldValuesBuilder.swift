/// Makes the value sets a wire reader reads, one after another, sharing lists of names among
/// them where it can: a set whose names are all among those of the last set of its kind (or
/// of another kind), and not fewer than half of them, takes that list — so a delta's changes,
/// which name the same fields, share one, as ``DataTable/makeDelta()``'s do. No set holds room
/// for more than twice the names it has, whatever the data.
///
/// ```swift
/// var builder = FieldValuesBuilder()
/// let old = builder.make(.old, names: ["Id", "Name"], values: [1, "a"])
/// let new = builder.make(.new, names: ["Id", "Name"], values: [1, "b"])   // old's list of names
/// ```
package struct FieldValuesBuilder {
    /// The list of names of the last set of each kind.
    private var recent = Array(repeating: FieldNames.none, count: DeltaChange.ValuesKind.allCases.count)

    package init() {}

    /// The values `values[i]` of `names[i]` (of a name given twice, the last value counts).
    /// `values` becomes the set's storage when the names are those of the last set of its
    /// kind, in their order.
    package mutating func make(_ kind: DeltaChange.ValuesKind, names: [String], values: consuming [Value?]) -> FieldValues {
        precondition(names.count == values.count, "one value per name")
        guard !names.isEmpty else { return FieldValues() }
        let own = recent[kind.rawValue]
        if names.count == own.names.count, names.indices.allSatisfy({ names[$0] == own.names[$0] }) {
            return FieldValues(names: own, slots: values)
        }
        if let made = shared(names, values, in: own) { return made }
        for index in recent.indices where recent[index] !== own {
            if let made = shared(names, values, in: recent[index]) {
                recent[kind.rawValue] = made.names
                return made
            }
        }
        var unique: [String] = []
        var slotOf: [String: Int] = [:]
        unique.reserveCapacity(names.count)
        slotOf.reserveCapacity(names.count)
        var slots: [Value?] = []
        slots.reserveCapacity(names.count)
        for (name, value) in zip(names, values) {
            if let slot = slotOf[name] {
                slots[slot] = value
            } else {
                slotOf[name] = unique.count
                unique.append(name)
                slots.append(value)
            }
        }
        let made = FieldNames(unique: unique)
        recent[kind.rawValue] = made
        return FieldValues(names: made, slots: slots)
    }

    /// The values by `list`'s names; nil when a name is not there, or `list` has more than
    /// twice as many names.
    private func shared(_ names: [String], _ values: [Value?], in list: FieldNames) -> FieldValues? {
        guard list.names.count <= 2 * names.count else { return nil }
        var slots = [Value?](repeating: nil, count: list.names.count)
        for (name, value) in zip(names, values) {
            guard let position = list.position(of: name) else { return nil }
            slots[position] = value
        }
        return FieldValues(names: list, slots: slots)
    }
}

extension DeltaChange {
    /// The kinds of value sets a change carries: its old, new and refreshed values, its edits'.
    /// Readers and writers of many changes keep what they learnt of each kind apart.
    package enum ValuesKind: Int, CaseIterable {
        case old, new, refreshed, edit
    }
}

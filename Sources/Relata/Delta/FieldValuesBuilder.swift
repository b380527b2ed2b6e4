/// Makes the value sets a wire reader reads, one after another, sharing one list of names
/// among them where it can: a set whose names are all among the set made before (and not
/// fewer than half of them) takes that set's list, so a delta's changes — which name the
/// same fields — share one, as ``DataTable/makeDelta()``'s do. No set holds room for more
/// than twice the names it has, whatever the data.
package struct FieldValuesBuilder {
    private var recent = FieldNames.none

    package init() {}

    /// The values `values[i]` of `names[i]` (of a name given twice, the last value counts).
    /// `values` becomes the set's storage when the names are the last set's, in its order.
    package mutating func make(names: [String], values: consuming [Value?]) -> FieldValues {
        precondition(names.count == values.count, "one value per name")
        guard !names.isEmpty else { return FieldValues() }
        let known = recent.names
        if names.count == known.count, names.indices.allSatisfy({ names[$0] == known[$0] }) {
            return FieldValues(names: recent, slots: values)
        }
        if known.count <= 2 * names.count, let slots = slots(of: names, values, in: recent) {
            return FieldValues(names: recent, slots: slots)
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
        recent = FieldNames(unique: unique)
        return FieldValues(names: recent, slots: slots)
    }

    /// Each value in the slot of its name in `list`; nil when a name is not there.
    private func slots(of names: [String], _ values: [Value?], in list: FieldNames) -> [Value?]? {
        var slots = [Value?](repeating: nil, count: list.names.count)
        for (name, value) in zip(names, values) {
            guard let position = list.position(of: name) else { return nil }
            slots[position] = value
        }
        return slots
    }
}

/// A ``FieldValuesBuilder`` for each kind of value set a delta's changes carry, so each kind
/// shares its names from change to change.
package struct ChangeValueBuilders {
    /// A change's old, new or refreshed values, or an edit's.
    package enum Kind: Int, CaseIterable {
        case old, new, refreshed, edit
    }

    private var builders = Array(repeating: FieldValuesBuilder(), count: Kind.allCases.count)

    package init() {}

    /// The values `values[i]` of `names[i]`, for a set of a kind (``FieldValuesBuilder/make(names:values:)``).
    package mutating func make(_ kind: Kind, names: [String], values: consuming [Value?]) -> FieldValues {
        builders[kind.rawValue].make(names: names, values: values)
    }
}

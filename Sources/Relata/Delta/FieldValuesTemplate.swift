/// A table's field names in a dictionary, and where each name sits in it: a change's values
/// are a copy of it with the values put in place, so no name is hashed again and the storage
/// is sized once. (A dictionary's copy keeps its layout, so the positions stay valid in every
/// copy; only `Dictionary.Values` is written, never a key.)
struct FieldValuesTemplate {
    private let names: [String: Value]
    private let positions: [Dictionary<String, Value>.Index]

    init(fields: [FieldDefinition]) {
        var names: [String: Value] = [:]
        names.reserveCapacity(fields.count)
        for field in fields { names[field.name] = .null }
        positions = fields.map { names.index(forKey: $0.name)! }   // every name was just inserted
        self.names = names
    }

    /// Every field's value by name: `value(field)` for each field index.
    func values(_ value: (Int) -> Value) -> [String: Value] {
        var values = names
        for (field, position) in positions.enumerated() { values.values[position] = value(field) }
        return values
    }
}

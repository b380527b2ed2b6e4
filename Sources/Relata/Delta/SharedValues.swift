/// The values of a sent delta's changes, for ``DataTable/makeDelta(sharingValuesWith:)``: a
/// change made again by a data server takes the sent change's old or new values
/// when it holds the same names with the same values, as they travel (``WireIdentity``).
struct SharedValues {
    private let sent: Delta
    private let fieldCount: Int
    private var positions: SentChangePositions
    /// Readers of the table's fields out of the sent values, one per side: each learns its
    /// side's list of names once.
    private var old: FieldValueReader
    private var new: FieldValueReader

    /// `names`: the table's fields, in order.
    init(sent: Delta, names: [String]) {
        self.sent = sent
        fieldCount = names.count
        positions = SentChangePositions(of: sent)
        old = FieldValueReader(names: names)
        new = FieldValueReader(names: names)
    }

    /// Where the sent change with id `id` is (looked for at `index` first), or nil.
    mutating func position(of id: Int, near index: Int) -> Int? {
        positions.position(of: id, near: index)
    }

    /// The sent change's old values when they are `value(field)` for every field; else nil.
    mutating func oldValues(at position: Int?, _ value: (Int) -> Value) -> FieldValues? {
        guard let position else { return nil }
        return Self.shared(sent.changes[position].oldValues, fieldCount: fieldCount, reader: &old, value)
    }

    /// The sent change's new values when they are `value(field)` for every field; else nil.
    mutating func newValues(at position: Int?, _ value: (Int) -> Value) -> FieldValues? {
        guard let position else { return nil }
        return Self.shared(sent.changes[position].newValues, fieldCount: fieldCount, reader: &new, value)
    }

    private static func shared(_ values: FieldValues, fieldCount: Int, reader: inout FieldValueReader,
                               _ value: (Int) -> Value) -> FieldValues? {
        guard values.count == fieldCount else { return nil }
        reader.load(values)
        for field in 0..<fieldCount {
            guard let sent = reader[field], WireIdentity.same(sent, value(field)) else { return nil }
        }
        return values
    }
}

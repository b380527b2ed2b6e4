/// Reads the values of a fixed list of field names out of changes' ``FieldValues``, by
/// position: where each name is in a list of names is learnt once per list, and a delta's
/// changes share one (``DataTable/makeDelta()`` and the wire readers make them so).
///
/// ```swift
/// var reader = FieldValueReader(names: ["ClientId", "ClientName"])
/// for index in delta.changes.indices {
///     reader.load(delta.changes[index].oldValues)
///     let id = reader[0]   // the change's ClientId, or nil when it has none
/// }
/// ```
package struct FieldValueReader {
    /// The names read, in the order ``subscript(_:)`` gives their values.
    package let names: [String]
    /// The list of names the values loaded last hold theirs by, and where each of ``names`` is in it.
    private var learnt: FieldNames?
    private var places: [Int?] = []
    private var loaded = FieldValues()

    /// A reader of `names`.
    package init(names: [String]) {
        self.names = names
    }

    /// The value of the name at `position` in ``names`` in the values loaded last; nil when they have none.
    package subscript(position: Int) -> Value? {
        places[position].flatMap { loaded.value(at: $0) }
    }

    /// Reads the values of ``names`` out of `values`.
    package mutating func load(_ values: FieldValues) {
        if values.names !== learnt {
            learnt = values.names
            places = names.map { values.names.position(of: $0) }
        }
        loaded = values
    }
}

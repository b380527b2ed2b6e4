/// Rows by their position in the table's storage, for code that refers to rows by number
/// rather than by holding their objects (RelataScript's row objects).
extension DataTable {
    /// Moves whenever rows are removed from the table's storage: positions taken before it moved
    /// may name other rows after.
    package var positionsGeneration: Int { structureGeneration }

    /// Moves whenever rows' original values are replaced (a change accepted, a key replaced, rows
    /// removed): originals read before it moved may be stale after.
    package var originalValuesGeneration: Int { originalsGeneration }

    /// The row at a position in the table's storage, or nil for a position it does not have.
    package func row(atPosition position: Int) -> DataTableRow? {
        position >= 0 && position < slotCount ? row(atSlot: position) : nil
    }
}

extension DataTableRow {
    /// The row's position in its table's storage (``DataTable/row(atPosition:)``), -1 once it has left.
    package var position: Int { slot }
}

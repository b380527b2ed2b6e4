/// Rows of one table by position, for work over many rows at once without a
/// row object for each: engines that hand columns to JavaScript use it, and
/// calculated fields computed in batches receive one.
///
/// ```swift
/// let changed = table.rowSet(in: .modified)
/// let prices = UnsafeMutableBufferPointer<Double>.allocate(capacity: changed.count)
/// try table.copyNumbers(ofField: "UnitPrice", in: changed, into: prices)
/// let first = changed[0]          // a DataTableRow, made on demand
/// ```
///
/// A row set is valid until rows leave the table (a cancelled addition, an
/// accepted deletion); using it after that traps.
public struct RowSet: RandomAccessCollection {
    /// The table the rows belong to.
    public let table: DataTable
    let slots: [Int]
    private let generation: Int

    init(table: DataTable, slots: [Int]) {
        self.table = table
        self.slots = slots
        self.generation = table.structureGeneration
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { slots.count }

    /// The row at a position, as the table's own row object.
    public subscript(position: Int) -> DataTableRow {
        checkValid()
        return table.row(atSlot: slots[position])
    }

    /// The rows whose positions `keep` accepts, as a new set.
    public func filter(positions keep: (Int) throws -> Bool) rethrows -> RowSet {
        RowSet(table: table, slots: try slots.indices.filter(keep).map { slots[$0] })
    }

    /// The rows without those at `positions` (positions outside the set are ignored), as a
    /// new set in the same order: the kept rows are copied in runs, so taking a few rows out
    /// of a million costs a copy, not a test per row.
    ///
    /// ```swift
    /// let passing = changed.removing(positions: [3, 17])
    /// ```
    public func removing(positions: some Sequence<Int>) -> RowSet {
        let removed = positions.filter { slots.indices.contains($0) }.sorted()
        var kept: [Int] = []
        kept.reserveCapacity(slots.count - removed.count)
        var start = 0
        for position in removed where position >= start {
            kept.append(contentsOf: slots[start..<position])
            start = position + 1
        }
        kept.append(contentsOf: slots[start...])
        return RowSet(table: table, slots: kept)
    }

    func checkValid() {
        precondition(generation == table.structureGeneration,
                     "a RowSet of table \(table.name) was used after rows left the table; make a new one")
    }
}

extension DataTable {
    /// The visible rows, as a row set.
    public var visibleRowSet: RowSet { RowSet(table: self, slots: visibleSlots) }

    /// The rows in a state, in table order, as a row set.
    public func rowSet(in state: RowState) -> RowSet {
        if state == .unchanged {
            return RowSet(table: self, slots: (0..<slotCount).filter { changes.state($0) == .unchanged })
        }
        return RowSet(table: self, slots: changes.slots(in: state))
    }

    /// The rows in each of several changed states, from one pass over the change records.
    ///
    /// ```swift
    /// let sets = table.rowSets(in: [.added, .modified, .deleted])
    /// ```
    public func rowSets(in states: [RowState]) -> [RowSet] {
        precondition(!states.contains(.unchanged), "unchanged rows have no change record; use rowSet(in: .unchanged)")
        return changes.slots(in: states).map { RowSet(table: self, slots: $0) }
    }

    /// Given rows of this table, as a row set.
    public func rowSet(_ rows: [DataTableRow]) throws -> RowSet {
        RowSet(table: self, slots: try rows.map { try slot(of: $0) })
    }

    /// Visible rows in a given state, in table order.
    ///
    /// ```swift
    /// let modified = table.rows(in: .modified)
    /// ```
    public func rows(in state: RowState) -> [DataTableRow] {
        Array(rowSet(in: state))
    }
}

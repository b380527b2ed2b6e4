/// The change records of a table's rows, found by slot without hashing:
/// `recordIndex[slot]` is 0 for a row without a record (the fast path of every
/// read), or the record's position plus one. Records are kept dense, so a
/// table with a million changed rows walks a plain array.
struct ChangeStore: Sequence {
    /// One entry per slot: 0, or the position of the slot's record plus one.
    private(set) var recordIndex: [Int32] = []
    private var records: [RowChanges] = []
    private var owners: [Int] = []
    /// Each record's state again, packed: scans by state touch one byte per record.
    private var states: [RowState] = []

    var count: Int { records.count }
    var slotCount: Int { recordIndex.count }

    @inline(__always) func isDirty(_ slot: Int) -> Bool { recordIndex[slot] != 0 }

    subscript(slot: Int) -> RowChanges? {
        get {
            let position = recordIndex[slot]
            return position == 0 ? nil : records[Int(position) - 1]
        }
        set {
            let position = Int(recordIndex[slot])
            switch (position, newValue) {
            case (0, nil):
                break
            case (0, let record?):
                records.append(record)
                owners.append(slot)
                states.append(record.state)
                recordIndex[slot] = Int32(records.count)
            case (_, let record?):
                records[position - 1] = record
                states[position - 1] = record.state
            case (_, nil):
                // Move the last record into the freed place.
                let last = records.count - 1
                if position - 1 != last {
                    records[position - 1] = records[last]
                    owners[position - 1] = owners[last]
                    states[position - 1] = states[last]
                    recordIndex[owners[last]] = Int32(position)
                }
                records.removeLast()
                owners.removeLast()
                states.removeLast()
                recordIndex[slot] = 0
            }
        }
    }

    /// A slot's state, read in place (no copy of the record).
    @inline(__always) func state(_ slot: Int) -> RowState {
        let position = recordIndex[slot]
        return position == 0 ? .unchanged : states[Int(position) - 1]
    }

    /// The posted value of a field when the record decides it: the pending value,
    /// or NULL for an added row without one; nil when the original stands.
    @inline(__always) func postedOverride(_ slot: Int, _ field: Int) -> Value? {
        let position = recordIndex[slot]
        if position == 0 { return nil }
        if let pending = records[Int(position) - 1].pending[field] { return pending }
        let state = records[Int(position) - 1].state
        return state == .added || state == .addedInEditMode ? .null : nil
    }

    /// The slots whose rows are in a state, in slot order.
    func slots(in state: RowState) -> [Int] {
        var result: [Int] = []
        recordIndex.withUnsafeBufferPointer { index in
            states.withUnsafeBufferPointer { states in
                for slot in index.indices where index[slot] != 0 && states[Int(index[slot]) - 1] == state {
                    result.append(slot)
                }
            }
        }
        return result
    }

    /// Calls `body` with the position (in `slots`) and record of every slot that has one.
    func forEachRecord(inSlots slots: [Int], _ body: (Int, UnsafePointer<RowChanges>) -> Void) {
        recordIndex.withUnsafeBufferPointer { index in
            records.withUnsafeBufferPointer { records in
                for (position, slot) in slots.enumerated() where index[slot] != 0 {
                    body(position, records.baseAddress! + Int(index[slot]) - 1)
                }
            }
        }
    }

    mutating func appendSlot() { recordIndex.append(0) }

    mutating func reserveCapacity(_ capacity: Int) { recordIndex.reserveCapacity(capacity) }

    /// Renumbers after slots were removed: `newSlot[old]` is the new slot, or -1 for a removed one.
    mutating func remap(_ newSlot: [Int], newCount: Int) {
        var remapped = ChangeStore()
        remapped.recordIndex = Array(repeating: 0, count: newCount)
        for (record, owner) in zip(records, owners) where newSlot[owner] >= 0 {
            remapped[newSlot[owner]] = record
        }
        self = remapped
    }

    /// The slots that have records.
    var keys: [Int] { owners }

    /// The records.
    var values: [RowChanges] { records }

    func makeIterator() -> some IteratorProtocol<(key: Int, value: RowChanges)> {
        zip(owners, records).lazy.map { (key: $0, value: $1) }.makeIterator()
    }
}

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
    /// For fields that batch work reads as numbers: each record's pending value as
    /// the bits of a double (NULL is NaN), or `noPendingValue`. Built on first use,
    /// then kept in step with every record change.
    private var numberMirrors: [Int: [UInt64]] = [:]
    /// A NaN payload no arithmetic produces, meaning "no pending value for this field".
    static let noPendingValue: UInt64 = 0x7FF4_DEAD_BEEF_0001

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
                add(record, for: slot)
            case (_, let record?):
                records[position - 1] = record
                states[position - 1] = record.state
                for field in numberMirrors.keys { numberMirrors[field]![position - 1] = Self.numberBits(record.pending[field]) }
            case (_, nil):
                // Move the last record into the freed place.
                let last = records.count - 1
                if position - 1 != last {
                    records.withUnsafeMutableBufferPointer { $0.swapAt(position - 1, last) }   // moved, not copied
                    owners[position - 1] = owners[last]
                    states[position - 1] = states[last]
                    for field in numberMirrors.keys { numberMirrors[field]![position - 1] = numberMirrors[field]![last] }
                    recordIndex[owners[last]] = Int32(position)
                }
                records.removeLast()
                owners.removeLast()
                states.removeLast()
                for field in numberMirrors.keys { numberMirrors[field]!.removeLast() }
                recordIndex[slot] = 0
            }
        }
    }

    /// Gives a slot without a record its first one (moved in, not copied).
    private mutating func add(_ record: consuming RowChanges, for slot: Int) {
        states.append(record.state)
        for field in numberMirrors.keys { numberMirrors[field]!.append(Self.numberBits(record.pending[field])) }
        records.append(consume record)
        owners.append(slot)
        recordIndex[slot] = Int32(records.count)
    }

    /// Changes a slot's record in place — no copy of it, so its values and edits are not
    /// copied either — starting from an empty record when the slot has none; a record left
    /// with nothing to say goes, unless `keepingClean` (a caller about to change it again,
    /// which then calls ``dropIfClean(_:)``).
    mutating func modify<Result>(_ slot: Int, keepingClean: Bool = false, _ body: (inout RowChanges) throws -> Result) rethrows -> Result {
        let position = Int(recordIndex[slot])
        guard position != 0 else {
            var record = RowChanges()
            let result = try body(&record)
            if !record.isClean { add(consume record, for: slot) }
            return result
        }
        let result = try body(&records[position - 1])
        if isClean(at: position - 1), !keepingClean {
            self[slot] = nil
        } else {
            states[position - 1] = state(at: position - 1)
            for field in numberMirrors.keys { numberMirrors[field]![position - 1] = Self.numberBits(pendingValue(at: position - 1, field)) }
        }
        return result
    }

    // Reads of one record's property for the mutating methods, which would otherwise copy the
    // whole record (its values and edits with it) to read one property. `isClean` is asked
    // through an exclusive access: read through Array's subscript, or an unsafe pointer, the
    // record is copied whole (a retain of each of its arrays) before a computed property is asked.
    private mutating func isClean(at position: Int) -> Bool { Self.isClean(&records[position]) }
    private static func isClean(_ record: inout RowChanges) -> Bool { record.isClean }
    private func state(at position: Int) -> RowState { records[position].state }
    private func pendingValue(at position: Int, _ field: Int) -> Value? { records[position].pending[field] }

    /// Removes a slot's record when it has nothing to say.
    mutating func dropIfClean(_ slot: Int) {
        let position = Int(recordIndex[slot])
        if position != 0, isClean(at: position - 1) { self[slot] = nil }
    }

    /// A slot's pending value of a field, read in place (no copy of the record).
    @inline(__always) func pendingValue(_ slot: Int, _ field: Int) -> Value? {
        let position = recordIndex[slot]
        return position == 0 ? nil : records[Int(position) - 1].pending[field]
    }

    /// A slot's edit buffer, read in place; nil when the row is not being edited.
    @inline(__always) func edit(_ slot: Int) -> ValuesByFieldIndex? {
        let position = recordIndex[slot]
        return position == 0 ? nil : records[Int(position) - 1].edit
    }

    /// Locks or unlocks a slot's row in place (no copy of the record); a record left with
    /// nothing to say goes.
    mutating func setLocked(_ locked: Bool, slot: Int) {
        let position = Int(recordIndex[slot])
        guard position != 0 else {
            if locked {
                var record = RowChanges()
                record.locked = true
                self[slot] = record
            }
            return
        }
        records[position - 1].locked = locked
        if isClean(at: position - 1) { self[slot] = nil }
    }

    /// How many records have a change id `wanted` holds.
    func count(ofChangeIds wanted: IntegerKeySet) -> Int {
        var count = 0
        for position in records.indices where wanted.contains(Int64(records[position].changeId)) { count += 1 }
        return count
    }

    /// The positions of the records whose change id `wanted` holds.
    private func recordPositions(ofChangeIds wanted: IntegerKeySet) -> [Int] {
        var positions: [Int] = []
        positions.reserveCapacity(wanted.count)
        for position in records.indices where wanted.contains(Int64(records[position].changeId)) { positions.append(position) }
        return positions
    }

    /// The slot of each record whose change id `wanted` holds, by change id.
    func slots(ofChangeIds wanted: IntegerKeySet) -> [Int: Int] {
        var result: [Int: Int] = [:]
        result.reserveCapacity(wanted.count)
        for position in records.indices where wanted.contains(Int64(records[position].changeId)) {
            result[records[position].changeId] = owners[position]
        }
        return result
    }

    /// The change ids of the records with a pending change (``RowChanges/isPendingChange``), read in place.
    var pendingChangeIds: IntegerKeySet {
        var ids: [Int] = []
        ids.reserveCapacity(records.count)
        for position in records.indices where states[position] != .addedInEditMode && records[position].changeId != 0 {
            ids.append(records[position].changeId)
        }
        return IntegerKeySet(ids)
    }

    /// Locks or unlocks, in place, the rows of the records whose change id `wanted` holds.
    mutating func setLocked(_ locked: Bool, changeIds wanted: IntegerKeySet) {
        let positions = recordPositions(ofChangeIds: wanted)
        var emptied: [Int] = []   // records left with nothing to say, dropped after: dropping one moves another
        records.withUnsafeMutableBufferPointer { records in   // each record changed where it is, never copied
            for position in positions {
                records[position].locked = locked
                if !locked, Self.isClean(&records[position]) { emptied.append(position) }
            }
        }
        for slot in emptied.map({ owners[$0] }) { self[slot] = nil }
    }

    /// A field's value in the slot's edit buffer, read in place (no copy of the record); nil when
    /// the row is not being edited or the edit leaves the field alone.
    @inline(__always) func editedValue(_ slot: Int, _ field: Int) -> Value? {
        let position = recordIndex[slot]
        return position == 0 ? nil : records[Int(position) - 1].edit?[field]
    }

    /// A slot's state, read in place (no copy of the record).
    @inline(__always) func state(_ slot: Int) -> RowState {
        let position = recordIndex[slot]
        return position == 0 ? .unchanged : states[Int(position) - 1]
    }

    /// Whether a slot's row is locked, read in place (no copy of the record).
    @inline(__always) func isLocked(_ slot: Int) -> Bool {
        let position = recordIndex[slot]
        return position != 0 && records[Int(position) - 1].locked
    }

    /// Whether a slot's row is in edit mode, read in place (no copy of the record).
    @inline(__always) func isEditing(_ slot: Int) -> Bool {
        let position = recordIndex[slot]
        return position != 0 && records[Int(position) - 1].edit != nil
    }

    /// A slot's edit history, read in place (no copy of the record); empty without a record.
    func history(_ slot: Int) -> [RowEdit] {
        let position = recordIndex[slot]
        return position == 0 ? [] : records[Int(position) - 1].history
    }

    /// A slot's change id, read in place (no copy of the record); 0 without a record.
    @inline(__always) func changeId(_ slot: Int) -> Int {
        let position = recordIndex[slot]
        return position == 0 ? 0 : records[Int(position) - 1].changeId
    }

    /// Gives a slot's record another change id in place; the slot must have a record.
    mutating func setChangeId(_ changeId: Int, slot: Int) {
        records[Int(recordIndex[slot]) - 1].changeId = changeId
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
        slots(in: [state])[0]
    }

    /// The slots in each of several states, in slot order. The records say how many
    /// rows each state has (counted in one pass for all states), so a state without rows
    /// costs no scan, and a state every record is in needs no look at the states.
    func slots(in wanted: [RowState]) -> [[Int]] {
        recordIndex.withUnsafeBufferPointer { index in
            states.withUnsafeBufferPointer { states in
                var counts = [Int](repeating: 0, count: RowState.allCases.count)
                for state in states { counts[Int(state.ordinal)] += 1 }
                return wanted.map { wantedState in
                    let count = counts[Int(wantedState.ordinal)]
                    guard count > 0 else { return [] }
                    let everyRecord = count == states.count
                    return [Int](unsafeUninitializedCapacity: count) { buffer, initialized in
                        var found = 0
                        for slot in 0..<index.count where index[slot] != 0 && (everyRecord || states[Int(index[slot]) - 1] == wantedState) {
                            buffer[found] = slot
                            found += 1
                        }
                        initialized = found
                    }
                }
            }
        }
    }

    /// Makes sure a field's pending values are mirrored as doubles (see ``withNumbers(field:_:)``).
    mutating func prepareNumberMirror(field: Int) {
        if numberMirrors[field] == nil {
            numberMirrors[field] = records.map { Self.numberBits($0.pending[field]) }
        }
    }

    /// Calls `body` with the record index, each record's state and — when `field` is
    /// given and prepared — each record's pending value of that field as double bits
    /// (`noPendingValue` where there is none; empty when `field` is nil).
    func withNumbers<Result>(field: Int?, _ body: (_ recordIndex: UnsafeBufferPointer<Int32>, _ states: UnsafeBufferPointer<RowState>,
                                                   _ pending: UnsafeBufferPointer<UInt64>) -> Result) -> Result {
        let mirror = field.flatMap { numberMirrors[$0] } ?? []
        precondition(field == nil || mirror.count == records.count, "prepareNumberMirror(field:) first")
        return recordIndex.withUnsafeBufferPointer { index in
            states.withUnsafeBufferPointer { states in
                mirror.withUnsafeBufferPointer { mirror in body(index, states, mirror) }
            }
        }
    }

    static func numberBits(_ value: Value?) -> UInt64 {
        guard let value else { return noPendingValue }
        return value.batchNumber.bitPattern
    }

    mutating func appendSlot() { recordIndex.append(0) }

    mutating func reserveCapacity(_ capacity: Int) { recordIndex.reserveCapacity(capacity) }

    /// Renumbers after slots were removed: `newSlot[old]` is the new slot, or -1 for a removed one.
    mutating func remap(_ newSlot: [Int], newCount: Int) {
        var remapped = ChangeStore()
        remapped.numberMirrors = numberMirrors.mapValues { _ in [] }
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

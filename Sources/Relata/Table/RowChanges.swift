/// Everything a row has beyond its original values: its state, pending and edit
/// values, and its place in the change log. Kept only for rows that have any of
/// it, so an unchanged table costs nothing here.
struct RowChanges {
    var state: RowState = .unchanged
    /// Current values that differ from the original (every value set on an added row).
    var pending: ValuesByFieldIndex = [:]
    /// Values written since `edit()`; nil when the row is not in edit mode.
    var edit: ValuesByFieldIndex? {
        get { editStorage.first }
        set { editStorage = newValue.map { [$0] } ?? [] }
    }
    /// The edit buffer out of line (rows are rarely in edit mode): one word here instead of seventy.
    private var editStorage: [ValuesByFieldIndex] = []
    /// Ties the row to its ``DeltaChange``; 0 when the row has no change.
    var changeId = 0
    /// The message of the last failed apply of this row's change.
    var failureMessage: String?
    var locked = false
    /// The user's edits of the row, in order (``DataTable/recordsEdits``); while the row is in
    /// edit mode the last may be open (sequence 0), collecting what the user writes.
    var history: [RowEdit] = []

    init(state: RowState = .unchanged, pending: ValuesByFieldIndex = [:]) {
        self.state = state
        self.pending = pending
    }

    /// Inlined so a record in an array is read where it is: a call would take a copy of it.
    @inline(__always) var isClean: Bool {
        state == .unchanged && pending.isEmpty && editStorage.isEmpty && changeId == 0 && failureMessage == nil && !locked && history.isEmpty
    }

    /// A change a delta carries: the row has a change id and is not a new row still in edit mode.
    var isPendingChange: Bool { changeId != 0 && state != .addedInEditMode }

    /// Deleted rows and rows added in edit mode are not part of the table's visible rows.
    var isHidden: Bool { state.hidesRow }
}

extension RowState {
    /// Deleted rows and rows added in edit mode are not part of the table's visible rows.
    var hidesRow: Bool { self == .deleted || self == .addedInEditMode }
}

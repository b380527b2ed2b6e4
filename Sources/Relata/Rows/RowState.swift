/// The change state of a ``DataTableRow``.
///
/// ```swift
/// let row = clients.rows[0]
/// row.rowState                     // .unchanged
/// try row.setValue("Acme Ltd", forKey: "ClientName")
/// row.rowState                     // .modified
/// ```
public enum RowState: String, Sendable, Hashable, Codable, CaseIterable {
    /// As received from the data source.
    case unchanged
    /// At least one field differs from its original value.
    case modified
    /// Added locally; not yet in the data source.
    case added
    /// Added in edit mode and not yet posted: invisible to the table until ``DataTableRow/post()``.
    case addedInEditMode
    /// Removed locally; the removal is not yet applied to the data source.
    case deleted
}

extension RowState {
    /// The position in `allCases`, for table lookups.
    var ordinal: UInt8 {
        switch self {
        case .unchanged: return 0
        case .modified: return 1
        case .added: return 2
        case .addedInEditMode: return 3
        case .deleted: return 4
        }
    }
}

/// What happens to a row; the input of the row state machine.
enum RowEvent: Sendable, Hashable {
    /// A field now differs from its original value.
    case fieldChanged
    /// The last field that differed from its original value was reverted.
    case lastChangeReverted
    /// Every change was cancelled (`cancel`, `revert`).
    case cancelled
    /// The row was removed from the table.
    case removed
    /// The row's edit was posted.
    case posted
    /// The row's edit was discarded.
    case discarded
    /// The data source accepted the row's change.
    case accepted
}

/// Where an event takes a row.
enum RowTransition: Sendable, Hashable {
    /// The row stays in the table in this state.
    case state(RowState)
    /// The row leaves the table (a cancelled or discarded addition, an accepted deletion).
    case detached
    /// The event is not allowed in this state; the reason says why.
    case rejected(String)
}

extension RowState {
    /// The row state machine: the state a row moves to when `event` happens.
    /// Pure, so it can be tested on its own.
    func after(_ event: RowEvent) -> RowTransition {
        switch (self, event) {
        case (.deleted, .fieldChanged), (.deleted, .lastChangeReverted):
            return .rejected("the row is deleted; cancel the deletion before changing it")
        case (.deleted, .removed):
            return .rejected("the row is already deleted")
        case (.deleted, .posted), (.deleted, .discarded):
            return .rejected("a deleted row is not in edit mode")

        case (.unchanged, .fieldChanged), (.modified, .fieldChanged): return .state(.modified)
        case (.added, .fieldChanged), (.added, .lastChangeReverted): return .state(.added)
        case (.addedInEditMode, .fieldChanged), (.addedInEditMode, .lastChangeReverted): return .state(.addedInEditMode)
        case (.unchanged, .lastChangeReverted), (.modified, .lastChangeReverted): return .state(.unchanged)

        // `cancel` restores the original values; an added row keeps existing (with its values cleared),
        // as the original system does; removing it is `DataTable.cancelChange(for:)`.
        case (.added, .cancelled): return .state(.added)
        case (.addedInEditMode, .cancelled): return .state(.addedInEditMode)
        case (_, .cancelled): return .state(.unchanged)

        case (.unchanged, .removed), (.modified, .removed): return .state(.deleted)
        case (.added, .removed): return .detached
        case (.addedInEditMode, .removed): return .rejected("the row was added in edit mode; discard it instead")

        case (.addedInEditMode, .posted): return .state(.added)
        case (.addedInEditMode, .discarded): return .detached
        case (_, .posted), (_, .discarded): return .state(self)

        case (.deleted, .accepted): return .detached
        case (.addedInEditMode, .accepted): return .rejected("a row in edit mode has no change to accept")
        case (_, .accepted): return .state(.unchanged)
        }
    }
}

import Testing
@testable import Relata

/// The row state machine on its own: every state × event.
@Suite struct RowStateMachineTests {
    @Test func changingFields() {
        #expect(RowState.unchanged.after(.fieldChanged) == .state(.modified))
        #expect(RowState.modified.after(.fieldChanged) == .state(.modified))
        #expect(RowState.added.after(.fieldChanged) == .state(.added))
        #expect(RowState.addedInEditMode.after(.fieldChanged) == .state(.addedInEditMode))
        #expect(RowState.deleted.after(.fieldChanged) == .rejected("the row is deleted; cancel the deletion before changing it"))
    }

    @Test func revertingTheLastChange() {
        #expect(RowState.modified.after(.lastChangeReverted) == .state(.unchanged))
        #expect(RowState.unchanged.after(.lastChangeReverted) == .state(.unchanged))
        #expect(RowState.added.after(.lastChangeReverted) == .state(.added))
        guard case .rejected = RowState.deleted.after(.lastChangeReverted) else { Issue.record("deleted rows cannot revert fields"); return }
    }

    @Test func cancelling() {
        #expect(RowState.modified.after(.cancelled) == .state(.unchanged))
        #expect(RowState.deleted.after(.cancelled) == .state(.unchanged))
        #expect(RowState.unchanged.after(.cancelled) == .state(.unchanged))
        #expect(RowState.added.after(.cancelled) == .state(.added))
        #expect(RowState.addedInEditMode.after(.cancelled) == .state(.addedInEditMode))
    }

    @Test func removing() {
        #expect(RowState.unchanged.after(.removed) == .state(.deleted))
        #expect(RowState.modified.after(.removed) == .state(.deleted))
        #expect(RowState.added.after(.removed) == .detached)
        guard case .rejected = RowState.deleted.after(.removed) else { Issue.record("double delete"); return }
        guard case .rejected = RowState.addedInEditMode.after(.removed) else { Issue.record("remove in edit mode"); return }
    }

    @Test func postingAndDiscarding() {
        #expect(RowState.addedInEditMode.after(.posted) == .state(.added))
        #expect(RowState.addedInEditMode.after(.discarded) == .detached)
        #expect(RowState.modified.after(.posted) == .state(.modified))
        #expect(RowState.unchanged.after(.discarded) == .state(.unchanged))
    }

    @Test func accepting() {
        #expect(RowState.modified.after(.accepted) == .state(.unchanged))
        #expect(RowState.added.after(.accepted) == .state(.unchanged))
        #expect(RowState.deleted.after(.accepted) == .detached)
        guard case .rejected = RowState.addedInEditMode.after(.accepted) else { Issue.record("accept in edit mode"); return }
    }

    @Test func everyPairHasAnAnswer() {
        let events: [RowEvent] = [.fieldChanged, .lastChangeReverted, .cancelled, .removed, .posted, .discarded, .accepted]
        for state in RowState.allCases {
            for event in events {
                if case .rejected(let reason) = state.after(event) { #expect(!reason.isEmpty) }
            }
        }
    }
}

import Relata
@testable import RelataRemote
import Testing

/// A minimal UpdateData answer (`Prefer: return=minimal`) gets back the values the batch carried,
/// whatever order the server answered in.
@Suite(.timeLimit(.minutes(1))) struct MinimalAnswerTests {
    static let sent = Delta(tableName: "Items", keyFields: ["Id"], loggedFields: ["Id", "Qty"], changes: [
        DeltaChange(changeId: 1, type: .update, oldValues: ["Id": 1, "Qty": 5], newValues: ["Id": 1, "Qty": 6]),
        DeltaChange(changeId: 2, type: .update, oldValues: ["Id": 2, "Qty": 7], newValues: ["Id": 2, "Qty": 8]),
        DeltaChange(changeId: 3, type: .insert, newValues: ["Id": -1, "Qty": 1]),
    ])

    @Test func eachChangeGetsTheValuesOfTheChangeItAnswersInAnyOrder() {
        var answer = Delta(tableName: "Items", keyFields: ["Id"], loggedFields: ["Id", "Qty"], changes: [
            DeltaChange(changeId: 3, type: .insert, status: .resolved, refreshedValues: ["Id": 40]),
            DeltaChange(changeId: 1, type: .update, status: .failed, message: "too many"),
            DeltaChange(changeId: 2, type: .update, status: .resolved),
        ])
        answer.restoreValuesLeftOut(from: Self.sent)
        #expect(answer.changes.map(\.changeId) == [3, 1, 2])
        #expect(answer.changes[0].newValues == ["Id": -1, "Qty": 1] && answer.changes[0].oldValues.isEmpty)
        #expect(answer.changes[0].refreshedValues == ["Id": 40])
        #expect(answer.changes[1].oldValues == ["Id": 1, "Qty": 5] && answer.changes[1].newValues == ["Id": 1, "Qty": 6])
        #expect(answer.changes[1].status == .failed && answer.changes[1].message == "too many")
        #expect(answer.changes[2].newValues == ["Id": 2, "Qty": 8])
    }

    @Test func aChangeTheBatchDidNotCarryAndAFullAnswerAreLeftAsTheyAre() {
        var answer = Delta(tableName: "Items", keyFields: ["Id"], loggedFields: ["Id", "Qty"], changes: [
            DeltaChange(changeId: 1, type: .update, oldValues: ["Id": 1, "Qty": 5], newValues: ["Id": 1, "Qty": 9], status: .resolved),
            DeltaChange(changeId: 9, type: .update, status: .resolved),
        ])
        let before = answer
        answer.restoreValuesLeftOut(from: Self.sent)
        #expect(answer == before)
    }
}

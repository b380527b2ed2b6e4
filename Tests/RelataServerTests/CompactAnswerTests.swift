import Foundation
import Relata
@testable import RelataServer
import Testing

/// A recorded answer leaves out what the batch carries, and a retry of the same batch puts it
/// back: the answer it gets is the first one, byte for byte, whatever the server changed, however
/// the retry orders or spells the batch, and whatever `==` would call equal but the wire does not.
@Suite(.timeLimit(.minutes(1))) struct CompactAnswerTests {
    static let apply = ApplyId()

    static func batch() -> [Delta] {
        [
            Delta(tableName: "Orders", keyFields: ["Id"], loggedFields: ["Id", "Total", "Note"], changes: [
                DeltaChange(changeId: 1, type: .update, oldValues: ["Id": 1, "Total": .double(0), "Note": "a"],
                            newValues: ["Id": 1, "Total": .double(0), "Note": "b"],
                            edits: [RowEdit(sequence: 1, kind: .update, values: ["Note": "b"])]),
                DeltaChange(changeId: 2, type: .update, oldValues: ["Id": 2, "Total": .double(5), "Note": "x"],
                            newValues: ["Id": 2, "Total": .double(6), "Note": "x"],
                            edits: [RowEdit(sequence: 2, kind: .update, values: ["Total": .double(6)])]),
                DeltaChange(changeId: 3, type: .insert, newValues: ["Id": -1, "Total": .double(1), "Note": "caf\u{E9}"],
                            edits: [RowEdit(sequence: 3, kind: .insert, values: ["Id": -1, "Total": .double(1), "Note": "caf\u{E9}"])]),
                DeltaChange(changeId: 4, type: .delete, oldValues: ["Id": 4, "Total": .decimal(Decimal(string: "1.50")!), "Note": .null]),
            ]),
            Delta(tableName: "Lines", keyFields: ["Id"], loggedFields: ["Id"], changes: [
                DeltaChange(changeId: 9, type: .delete, oldValues: ["Id": 9]),
            ]),
        ]
    }

    /// What a server answers: mostly the batch's changes as sent, resolved; some changed.
    static func answer(to batch: [Delta]) -> [Delta] {
        var answer = batch
        for delta in answer.indices {
            for change in answer[delta].changes.indices { answer[delta].changes[change].resolve() }
        }
        answer[0].tableName = "ORDERS"   // the server's own spelling
        answer[0].changes[0].newValues["Total"] = .double(-0.0)   // `==` to 0.0, not the same on the wire
        answer[0].changes[1].fail(ChangeFailure(.refusal, "too much"))
        answer[0].changes[2].newValues = ["Id": 77, "Total": .double(1), "Note": "caf\u{E9}"]   // the key the database gave
        answer[0].changes[2].refreshedValues = ["Id": 77]
        answer[0].changes[2].edits = nil
        // A field named the same as Swift compares names, not as the wire does.
        answer[0].changes[3].oldValues = ["Id": 4, "Total": .decimal(Decimal(string: "1.50")!), "No\u{301}te": .null]
        // A change the server's rules made: the batch has no such change.
        answer[1].changes.append(DeltaChange(changeId: 10, type: .update, oldValues: ["Id": 10], newValues: ["Id": 10], status: .resolved))
        return answer
    }

    static func bytes(_ deltas: [Delta]) throws -> Data { try DeltaBinary.encode(deltas) }

    /// The same answer as the wire sees it (`==` would take -0.0 for 0.0; the bytes depend on
    /// the order a dictionary happens to keep).
    static func same(_ a: [Delta], _ b: [Delta]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { x, y in
            x.tableName == y.tableName && x.keyFields == y.keyFields && x.loggedFields == y.loggedFields && x.changes.count == y.changes.count
                && zip(x.changes, y.changes).allSatisfy { c, d in
                    c.changeId == d.changeId && c.type == d.type && c.status == d.status && c.message == d.message && c.failure == d.failure
                        && WireIdentity.same(c.oldValues, d.oldValues) && WireIdentity.same(c.newValues, d.newValues)
                        && WireIdentity.same(c.refreshedValues, d.refreshedValues) && WireIdentity.same(c.edits, d.edits)
                }
        }
    }

    @Test func aRetryOfTheSameBatchGetsTheAnswerByteForByte() throws {
        let batch = Self.batch(), answer = Self.answer(to: batch)
        let text = try ApplyLog.recordedText(of: answer, batch: batch)
        #expect(text.hasPrefix(ApplyLog.compactAnswer))
        #expect(Self.same(try ApplyLog.answer(fromRecorded: text, batch: batch, apply: Self.apply), answer))

        // The retry: tables in another order and case, changes in another order — the same batch by its fingerprint.
        var retry = Array(batch.reversed())
        for index in retry.indices {
            retry[index].tableName = retry[index].tableName.lowercased()
            retry[index].changes.reverse()
        }
        #expect(try DeltaFingerprint.of(retry) == DeltaFingerprint.of(batch))
        #expect(Self.same(try ApplyLog.answer(fromRecorded: text, batch: retry, apply: Self.apply), answer))
        // What a plain `==` misses is caught: the -0.0 the server answered.
        var zero = answer
        zero[0].changes[0].newValues["Total"] = .double(0)
        #expect(zero == answer && !Self.same(zero, answer))
    }

    @Test func onlyWhatIsTheSameOnTheWireIsLeftOut() throws {
        let batch = Self.batch(), answer = Self.answer(to: batch)
        let text = try ApplyLog.recordedText(of: answer, batch: batch)
        // Read back without the batch's values: what was left out is empty.
        let body = text.dropFirst(ApplyLog.compactAnswer.count)
        let recorded = try DeltaBinary.decode(try #require(Data(base64Encoded: String(body.prefix { $0 != "." }))))
        let orders = recorded[0].changes, lines = recorded[1].changes
        #expect(orders[0].newValues["Total"] != nil, "-0.0 is not the 0.0 the batch carries: kept")
        #expect(orders[0].edits == nil, "the answer's edits are the batch's: left out")
        #expect(orders[1].oldValues.isEmpty && orders[1].newValues.isEmpty, "a failed change as sent: left out")
        #expect(orders[2].newValues["Id"] == 77, "values the server changed: kept")
        #expect(orders[3].oldValues.count == 3, "a field name that differs by its code points: kept")
        #expect(lines[0].oldValues.isEmpty, "a delete as sent: left out")
        #expect(lines[1].newValues["Id"] == 10, "a change the batch does not carry: kept whole")
        // Smaller than the whole answer.
        #expect(text.count < ApplyLog.binaryAnswer.count + (try Self.bytes(answer)).base64EncodedString().count)
    }

    @Test func aRecordThatCannotBeReadBackSaysSo() throws {
        let batch = Self.batch(), answer = Self.answer(to: batch)
        let text = try ApplyLog.recordedText(of: answer, batch: batch)
        // A batch without a change the record left out: refused, not answered with empty values.
        var other = batch
        other[1].changes.removeAll()
        #expect(throws: SQLError.self) { try ApplyLog.answer(fromRecorded: text, batch: other, apply: Self.apply) }
        // Bits cut short, or no bits at all.
        let cut = String(text.prefix { $0 != "." }) + "."
        #expect(throws: SQLError.self) { try ApplyLog.answer(fromRecorded: cut, batch: batch, apply: Self.apply) }
        #expect(throws: SQLError.self) { try ApplyLog.answer(fromRecorded: ApplyLog.compactAnswer + "not base64", batch: batch, apply: Self.apply) }
    }
}

import Foundation
import Testing
@testable import Relata

/// A batch's fingerprint: the same batch however it was encoded or ordered, another batch
/// whatever small thing differs — a value's type, an edit, an original.
@Suite(.timeLimit(.minutes(1))) struct DeltaFingerprintTests {
    @Test func theSameBatchHasOneFingerprintHoweverItCame() throws {
        let deltas = DeltaBinaryTests.sample()
        let fingerprint = try DeltaFingerprint.of(deltas)
        #expect(fingerprint.hasPrefix(DeltaFingerprint.prefix))
        #expect(try DeltaFingerprint.of(DeltaJSON.decode(DeltaJSON.encode(deltas))) == fingerprint)
        #expect(try DeltaFingerprint.of(DeltaBinary.decode(DeltaBinary.encode(deltas))) == fingerprint)
        // Tables in another order and case, each table's changes in another order.
        var reordered = Array(deltas.reversed())
        for index in reordered.indices {
            reordered[index].tableName = reordered[index].tableName.uppercased()
            reordered[index].changes.reverse()
        }
        #expect(try DeltaFingerprint.of(reordered) == fingerprint)
        // What the server answers with (status, refreshed values) is not the batch.
        var answered = deltas
        answered[0].changes[0].status = .resolved
        answered[0].changes[0].refreshedValues = ["I": 1]
        #expect(try DeltaFingerprint.of(answered) == fingerprint)
    }

    /// The form is what servers have recorded: a record's fingerprint must still match its batch
    /// after an upgrade. Pinned for a sample and for a change with more values than a row's few.
    @Test func theFormIsTheOneRecorded() throws {
        let all: FieldValues = [
            "I": .integer(-9_223_372_036_854_775_807), "D": .double(0.1), "C": .decimal(Decimal(string: "123456789012345.6789")!),
            "B": .boolean(true), "S": .string("quote \" ü 😀 \u{1}"), "T": .date(Date(timeIntervalSinceReferenceDate: 812_345_678.125)),
            "G": .guid(UUID(uuidString: "5B1C2F36-0D7A-4E55-9C1E-7A2B3C4D5E6F")!), "X": .blob(Data([0, 1, 255])), "N": .null,
        ]
        let sample = [
            Delta(tableName: "Orders 📦", keyFields: ["OrderId"], loggedFields: ["OrderId", "Total"], changes: [
                DeltaChange(changeId: -3, type: .insert, newValues: ["OrderId": -3, "Total": .decimal(Decimal(string: "-0.001")!)],
                            edits: [RowEdit(sequence: 1, kind: .insert, values: ["OrderId": -3]), RowEdit(sequence: 2, kind: .delete)]),
            ]),
            Delta(tableName: "T", keyFields: ["I"], loggedFields: ["I", "S"], changes: [
                DeltaChange(changeId: 3, type: .delete, oldValues: all),
                DeltaChange(changeId: 1, type: .insert, newValues: all, edits: []),
                DeltaChange(changeId: 2, type: .update, oldValues: ["I": 1, "S": "a"], newValues: ["I": 2, "S": "b"],
                            edits: [RowEdit(sequence: 4, kind: .update, values: ["S": "first", "I": 5]), RowEdit(sequence: 9, kind: .update, values: ["I": 2])]),
            ]),
        ]
        #expect(try DeltaFingerprint.of(sample) == "2:81f04a9d2a2470d7599f7a79c0b79ede045cfbd7d38cc9d8c2a2cb4f1c4ac941")
        let names = (0..<40).map { "F\($0)" }
        var wide = FieldValues(), reversed = FieldValues()
        for (position, name) in names.enumerated() { wide[name] = .integer(Int64(position)) }
        for (position, name) in names.enumerated().reversed() { reversed[name] = .integer(Int64(position)) }
        let row = Array(names.prefix(6))
        func batch(_ values: FieldValues) -> [Delta] {
            [Delta(tableName: "Wide", keyFields: ["F0"], loggedFields: names, changes: [
                DeltaChange(changeId: 1, type: .update, oldValues: values.filter { row.contains($0.key) }, newValues: values),
            ])]
        }
        #expect(try DeltaFingerprint.of(batch(wide)) == "2:3ef253da114e70753a6e7dc146958bb6624683564993ca496a33cfdf9f192d88")
        #expect(try DeltaFingerprint.of(batch(reversed)) == "2:3ef253da114e70753a6e7dc146958bb6624683564993ca496a33cfdf9f192d88")
        // A batch whose form is hashed in several parts.
        let many = (1...3_000).map { id in
            DeltaChange(changeId: id, type: .update, oldValues: ["Id": .integer(Int64(id)), "Name": .string("row \(id)")],
                        newValues: ["Id": .integer(Int64(id)), "Name": .string("row \(id), renamed")],
                        edits: [RowEdit(sequence: Int64(id), kind: .update, values: ["Name": .string("row \(id), renamed")])])
        }
        #expect(try DeltaFingerprint.of([Delta(tableName: "Big", keyFields: ["Id"], loggedFields: ["Id", "Name"], changes: many)])
                == "2:848fcff39c64737f980853aa732eb1987e754ab61d9fbd4416d0ab90b4587616")
    }

    @Test func anyDifferenceInTheChangesIsAnotherBatch() throws {
        let deltas = DeltaBinaryTests.sample()
        let fingerprint = try DeltaFingerprint.of(deltas)
        var variants: [String: [Delta]] = [:]
        var typed = deltas
        typed[0].changes[1].newValues["I"] = .double(Double(typed[0].changes[1].newValues["I"]?.integerValue ?? 0))
        variants["an integer sent as a double"] = typed
        var edited = deltas
        edited[0].changes[1].edits?[1].values["I"] = 3
        variants["an edit's value"] = edited
        var unedited = deltas
        unedited[0].changes[1].edits?.removeLast()
        variants["an edit less"] = unedited
        var original = deltas
        original[0].changes[1].oldValues["S"] = .string("another original")
        variants["an original"] = original
        var renumbered = deltas
        renumbered[0].changes[0].changeId += 100
        variants["a change's id"] = renumbered
        var moved = deltas
        moved[1].changes.append(contentsOf: moved[0].changes.prefix(1))
        moved[0].changes.removeFirst()
        variants["a change in another table"] = moved
        var retyped = deltas
        retyped[0].changes[0].type = retyped[0].changes[0].type == .update ? .delete : .update
        variants["a change's type"] = retyped
        var nulled = deltas
        nulled[0].changes[1].newValues["N"] = .null
        variants["a NULL added"] = nulled
        for (difference, variant) in variants {
            #expect(try DeltaFingerprint.of(variant) != fingerprint, "\(difference)")
        }
        #expect(Set(try variants.values.map(DeltaFingerprint.of)).count == variants.count, "each difference its own fingerprint")
    }
}

import Foundation
import Testing
@testable import Relata

/// A batch's fingerprint: the same batch however it was encoded or ordered, another batch
/// whatever small thing differs — a value's type, an edit, an original.
@Suite struct DeltaFingerprintTests {
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

import Foundation
import Testing
@testable import Relata

/// UpdateData's binary form: what it carries is what the JSON carries, both ways, and damaged
/// or hostile bytes are refused saying where — never a trap, never an allocation the data
/// cannot back.
@Suite struct DeltaBinaryTests {
    /// The JSON tests' sample, with edits and a delta whose changes share no field names.
    static func sample() -> [Delta] {
        var deltas = DeltaJSONTests.sample()
        deltas[0].changes[1].edits = [
            RowEdit(sequence: 4, kind: .update, values: ["I": 5, "S": "first"]),
            RowEdit(sequence: 9, kind: .update, values: ["I": 2]),
        ]
        deltas[0].changes[0].edits = []
        deltas.append(Delta(tableName: "Orders 📦", keyFields: ["OrderId"], loggedFields: ["OrderId", "Total"], changes: [
            DeltaChange(changeId: -3, type: .insert, newValues: ["OrderId": -3, "Total": .decimal(Decimal(string: "-0.001")!)],
                        edits: [RowEdit(sequence: 1, kind: .insert, values: ["OrderId": -3]), RowEdit(sequence: 2, kind: .delete)]),
        ]))
        return deltas
    }

    /// Value maps copied from one template (one order of names), built apart (each its own
    /// order), with more or fewer names, names moving between maps: each arrives as it went.
    @Test func manyChangesOfMixedShapesArriveAsTheyWent() throws {
        let template: FieldValues = ["Id": 0, "Name": "", "Qty": 0, "Price": 0.5, "Note": .null]
        var changes: [DeltaChange] = []
        for id in 1...300 {
            var old = template, new = template
            old["Id"] = .integer(Int64(id))
            new["Id"] = .integer(Int64(id))
            new["Qty"] = .integer(Int64(id % 7))
            if id % 5 == 0 { new = FieldValues(uniqueKeysWithValues: new.map { ($0.key, $0.value) }.reversed()) }   // another order
            if id % 11 == 0 { new["Extra \(id % 3)"] = "more" }
            if id % 13 == 0 { old = ["Id": .integer(Int64(id))] }
            var change = DeltaChange(changeId: id, type: .update, oldValues: old, newValues: new,
                                     edits: [RowEdit(sequence: Int64(id), kind: .update, values: id % 2 == 0 ? ["Qty": 1] : ["Name": "n", "Qty": 2])])
            if id % 17 == 0 { change.status = .resolved; change.refreshedValues = ["Price": 1.5, "Id": .integer(Int64(id))] }
            changes.append(change)
        }
        let deltas = [Delta(tableName: "Items", keyFields: ["Id"], loggedFields: ["Id", "Qty"], changes: changes)]
        #expect(try DeltaBinary.decode(DeltaBinary.encode(deltas)) == deltas)
        let minimal = try DeltaBinary.decode(DeltaBinary.encode(deltas, minimal: true))
        #expect(minimal[0].changes.map(\.refreshedValues) == changes.map(\.refreshedValues))
        #expect(minimal[0].changes.allSatisfy { $0.oldValues.isEmpty && $0.newValues.isEmpty && $0.edits == nil })
    }

    @Test func itCarriesWhatTheJSONCarriesBothWays() throws {
        let deltas = Self.sample()
        let apply = ApplyId()
        let binary = try DeltaBinary.decodeRequest(DeltaBinary.encode(deltas, apply: apply))
        let json = try DeltaJSON.decodeRequest(DeltaJSON.encode(deltas, apply: apply))
        #expect(binary.deltas == json.deltas)
        #expect(binary.deltas == deltas)
        #expect(binary.apply?.id == apply.id && binary.apply?.madeAt == apply.madeAt)
        #expect(try DeltaBinary.decodeRequest(DeltaBinary.encode(deltas)).apply == nil)
        // A date finer than a microsecond arrives as the JSON's does: rounded to the microsecond.
        let fine = [Delta(tableName: "T", keyFields: [], loggedFields: [], changes: [
            DeltaChange(changeId: 1, type: .insert, newValues: ["T": .date(Date(timeIntervalSince1970: 1_700_000_000.123_456_789))]),
        ])]
        let fineJSON = try DeltaJSON.decode(DeltaJSON.encode(fine))
        #expect(try DeltaBinary.decode(DeltaBinary.encode(fine)) == fineJSON)
    }

    @Test func theMinimalFormLeavesOutWhatTheClientSent() throws {
        let deltas = Self.sample()
        let binary = try DeltaBinary.decode(DeltaBinary.encode(deltas, minimal: true))
        #expect(try binary == DeltaJSON.decode(DeltaJSON.encode(deltas, minimal: true)))
        #expect(binary[0].changes.allSatisfy { $0.oldValues.isEmpty && $0.newValues.isEmpty && $0.edits == nil })
        #expect(binary[0].changes[1].failure == deltas[0].changes[1].failure)
        #expect(binary[0].changes[0].refreshedValues == ["I": 7])
        #expect(try DeltaBinary.encode(deltas, minimal: true).count < DeltaBinary.encode(deltas).count)
    }

    @Test func aValueTheJSONCannotCarryIsRefusedByBothNamingTheField() throws {
        let delta = Delta(tableName: "Items", keyFields: [], loggedFields: [], changes: [
            DeltaChange(changeId: 1, type: .insert, newValues: ["Price": .double(.infinity)]),
        ])
        let error = #expect(throws: RelataError.self) { try DeltaBinary.encode([delta]) }
        #expect(error?.code == .invalidArgument && error?.table == "Items" && error?.field == "Price")
        #expect(throws: RelataError.self) { try DeltaJSON.encode([delta]) }
    }

    /// The error for bytes that should be refused: an invalid delta, whose message names `what`.
    func refusal(_ bytes: [UInt8], saying what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let error = #expect(throws: RelataError.self, sourceLocation: sourceLocation) { try DeltaBinary.decode(bytes) }
        #expect(error?.code == .invalidDelta, sourceLocation: sourceLocation)
        #expect(error?.message.contains(what) == true, "\(error?.message ?? "")", sourceLocation: sourceLocation)
    }

    /// A small request written by hand: one delta of table T naming field "F", one update whose
    /// new values are `values` (a count, then entries).
    func handWritten(names: [String] = ["F"], changes: UInt64 = 1, values: [UInt8], trailing: [UInt8] = []) -> [UInt8] {
        var writer = BinaryWriter()
        for byte in DeltaBinary.magic { writer.write(byte) }
        writer.write(DeltaBinary.version)
        writer.write(false)
        writer.write(UInt64(1))
        writer.write("T")
        writer.write(UInt64(0))
        writer.write(UInt64(0))
        writer.write(UInt64(names.count))
        for name in names { writer.write(name) }
        writer.write(changes)
        writer.write(Int64(1))
        writer.write(UInt8(1))   // update
        writer.write(UInt8(0))   // pending
        writer.write(UInt8(0))   // no edits, message or failure
        writer.write(UInt32(0))  // oldValues
        return writer.bytes + values + [0, 0, 0, 0] + trailing   // newValues, then refreshedValues
    }

    /// Changes that name their fields in the same order share a dictionary's layout as they are
    /// read: each still gets its own values, a name given twice keeps its last value, and a change
    /// in another order or with another name between them breaks nothing.
    @Test func changesOfOneShapeEachGetTheirOwnValues() throws {
        func integer(_ value: Int64) -> [UInt8] { [1] + withUnsafeBytes(of: value.littleEndian) { Array($0) } }
        func values(_ entries: [(UInt32, Int64)]) -> [UInt8] {
            withUnsafeBytes(of: UInt32(entries.count).littleEndian) { Array($0) }
                + entries.flatMap { name, value in withUnsafeBytes(of: name.littleEndian) { Array($0) } + integer(value) }
        }
        func change(_ id: Int64, _ entries: [(UInt32, Int64)]) -> [UInt8] {
            withUnsafeBytes(of: id.littleEndian) { Array($0) } + [1, 0, 0] + [0, 0, 0, 0] + values(entries) + [0, 0, 0, 0]
        }
        let shapes: [[(UInt32, Int64)]] = [
            [(0, 1), (1, 2)], [(0, 3), (1, 4)], [(1, 5), (0, 6)], [(0, 7), (1, 8)],
            [(0, 9), (0, 10), (1, 11)], [(0, 12), (0, 13), (1, 14)], [(0, 15), (2, 16)], [(0, 17), (1, 18)],
        ]
        let first = values(shapes[0]) + [0, 0, 0, 0]
        let rest = shapes.indices.dropFirst().flatMap { change(Int64($0 + 1), shapes[$0]) }
        let read = try DeltaBinary.decode(handWritten(names: ["A", "B", "C"], changes: UInt64(shapes.count), values: Array(first.dropLast(4)), trailing: rest))
        let expected: [FieldValues] = [
            ["A": 1, "B": 2], ["A": 3, "B": 4], ["B": 5, "A": 6], ["A": 7, "B": 8],
            ["A": 10, "B": 11], ["A": 13, "B": 14], ["A": 15, "C": 16], ["A": 17, "B": 18],
        ]
        #expect(read[0].changes.map(\.newValues) == expected)
    }

    @Test func hostileBytesAreRefusedSayingWhere() throws {
        let one: [UInt8] = [1, 0, 0, 0, 0, 0, 0, 0]   // one value, of name 0
        #expect(try DeltaBinary.decode(handWritten(values: one + [1] + [7, 0, 0, 0, 0, 0, 0, 0]))[0].changes[0].newValues == ["F": 7])
        refusal(Array("RELATARS".utf8) + [1, 0, 0, 0], saying: "does not start with \"RELATADL\"")
        refusal(DeltaBinary.magic + [9, 0, 0, 0], saying: "version 9")
        refusal(handWritten(changes: UInt64.max, values: []), saying: "changes claims")
        refusal(handWritten(values: [0xFF, 0xFF, 0xFF, 0x7F]), saying: "newValues claims 2147483647 values")
        refusal(handWritten(values: [1, 0, 0, 0, 5, 0, 0, 0, 0]), saying: "field name 5 is not among the delta's 1")
        refusal(handWritten(values: one + [42]), saying: "changes[0].newValues.F: 42 is not a value tag")
        let secondChange: [UInt8] = [2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0] + [0, 0, 0, 0] + one + [42]   // id 2, update, pending, no parts; no oldValues
        refusal(handWritten(changes: 2, values: [0, 0, 0, 0], trailing: secondChange),
                saying: "the binary delta, deltas[0].changes[1].newValues.F: 42 is not a value tag")
        refusal(handWritten(values: one + [2] + Array(withUnsafeBytes(of: Double.nan.bitPattern) { Array($0) })),
                saying: "newValues.F: expected a finite number")
        refusal(handWritten(values: one + [5, 2, 0, 0, 0, 0xC3, 0x28]), saying: "not valid UTF-8")
        refusal(handWritten(values: one + [5, 0xFF, 0xFF, 0xFF, 0xFF]), saying: "the data ends early")
        refusal(handWritten(values: one + [3, 3, 0, 0, 0] + Array("1kg".utf8)), saying: "newValues.F")
        refusal(handWritten(values: one + [0], trailing: [0]), saying: "1 bytes follow the last delta")
        refusal(handWritten(names: ["\u{0}"], values: one + [4, 2]), saying: "2 is not a boolean")
    }

    /// The fuzz target's seeds (`Fuzz/Corpus/delta-binary`, written by hand from the format) are
    /// valid requests: the documented form is the one the reader reads.
    @Test func theHandWrittenFuzzSeedsAreValidRequests() throws {
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fuzz/Corpus/delta-binary")
        let plain = try DeltaBinary.decodeRequest(Data(contentsOf: corpus.appendingPathComponent("update.bin")))
        let withId = try DeltaBinary.decodeRequest(Data(contentsOf: corpus.appendingPathComponent("update-with-apply-id.bin")))
        #expect(plain.apply == nil && withId.apply?.madeAt == 1_764_140_000)
        #expect(plain.deltas == withId.deltas)
        let json = try DeltaJSON.decode(Data(contentsOf: corpus.deletingLastPathComponent().appendingPathComponent("delta-json/update.json")))
        var expected = json
        expected[0].changes[1].edits = [RowEdit(sequence: 4, kind: .insert, values: ["OrderId": -1]),
                                        RowEdit(sequence: 5, kind: .update, values: ["Status": "new"])]
        #expect(plain.deltas == expected)
    }

    @Test func noDamageReachesATrap() throws {
        let bytes = Array(try DeltaBinary.encode(Self.sample(), apply: ApplyId()))
        func decodesOrIsRefused(_ bytes: [UInt8]) {
            do {
                _ = try DeltaBinary.decode(bytes)
            } catch let error as RelataError {
                #expect(error.code == .invalidDelta)
            } catch {
                Issue.record("not a RelataError: \(error)")
            }
        }
        for length in 0..<bytes.count { decodesOrIsRefused(Array(bytes[0..<length])) }
        for index in bytes.indices {
            for replacement: UInt8 in [0, 1, 0x7F, 0x80, 0xFF] where replacement != bytes[index] {
                var damaged = bytes
                damaged[index] = replacement
                decodesOrIsRefused(damaged)
            }
        }
    }
}

import Foundation
import Testing
@testable import Relata

/// `FieldValues`: a dictionary of values by field name to its users, values by position in a
/// shared list of names inside.
@Suite(.timeLimit(.minutes(1))) struct FieldValuesTests {
    @Test func readsAndWritesLikeADictionaryKeepingItsNamesInOrder() {
        var values: FieldValues = ["Id": 7, "Name": "Acme"]
        #expect(values.count == 2 && !values.isEmpty)
        #expect(values["Id"] == 7 && values["Name"] == "Acme" && values["Nope"] == nil)
        values["Discount"] = 0.5
        values["Name"] = "Acme Ltd"
        #expect(values.keys == ["Id", "Name", "Discount"])
        #expect(values.values == [7, "Acme Ltd", 0.5])
        #expect(values.removeValue(forKey: "Id") == 7)
        #expect(values.removeValue(forKey: "Id") == nil)
        #expect(values.keys == ["Name", "Discount"] && values.count == 2)
        values["Id"] = .null   // a null is a value, not an absence; a name held before goes back to its place
        #expect(values.count == 3 && values["Id"] == .null)
        #expect(values.first?.key == "Id")
        #expect(Array(values).map(\.key) == ["Id", "Name", "Discount"])
        #expect(values.dictionary == ["Name": "Acme Ltd", "Discount": 0.5, "Id": .null])
        let literal: FieldValues = ["A": 1, "A": 2]   // the last of a name counts
        #expect(literal == ["A": 2] && literal.count == 1)
        #expect(FieldValues().isEmpty && FieldValues().keys.isEmpty && FieldValues() == [:])
    }

    @Test func equalAndHashedAlikeWhateverTheOrderOrHowTheyWereMade() throws {
        let table = try makeClients()
        try table.rows[0].setValue("Acme Ltd", forKey: "ClientName")
        let made = try table.makeDelta().changes[0].newValues
        let byHand = FieldValues(uniqueKeysWithValues: made.reversed().map { ($0.key, $0.value) })
        #expect(byHand.keys == made.keys.reversed())
        #expect(made == byHand && byHand == made)
        #expect(made.hashValue == byHand.hashValue)
        #expect(Set([made, byHand, FieldValues(made.dictionary)]).count == 1)
        var other = byHand
        other["ClientName"] = "Acme"
        #expect(other != made)
        other["ClientName"] = nil
        #expect(other != made, "one value fewer")
        #expect(FieldValues(["X": .integer(1)]) != ["Y": .integer(1)])
    }

    @Test func theChangesOfADeltaShareTheirNamesAndACopySharesItsStorage() throws {
        let table = try makeClients()
        for row in table.rows { try row.setValue("Renamed", forKey: "ClientName") }
        let changes = try table.makeDelta().changes
        #expect(changes.count > 1)
        #expect(changes.allSatisfy { $0.oldValues.names === changes[0].oldValues.names && $0.newValues.names === changes[0].oldValues.names })
        var copy = changes[0].newValues
        #expect(copy.isSameStorage(as: changes[0].newValues))
        copy["ClientName"] = "Again"
        #expect(!copy.isSameStorage(as: changes[0].newValues) && changes[0].newValues["ClientName"] == "Renamed")
    }

    @Test func mergesFiltersAndMapsAsADictionaryWould() {
        var values: FieldValues = ["A": 1, "B": 2]
        values.merge(["B": 20, "C": 30]) { old, new in .integer((old.integerValue ?? 0) + (new.integerValue ?? 0)) }
        #expect(values == ["A": 1, "B": 22, "C": 30] && values.keys == ["A", "B", "C"])
        let kept = values.filter { $0.key != "B" }
        #expect(kept == ["A": 1, "C": 30] && kept.count == 2)
        #expect(values.mapValues { .integer(($0.integerValue ?? 0) * 2) } == ["A": 2, "B": 44, "C": 60])
        #expect(values.description == "[\"A\": \(String(reflecting: Value.integer(1))), \"B\": \(String(reflecting: Value.integer(22))), "
                + "\"C\": \(String(reflecting: Value.integer(30)))]")
        #expect(FieldValues().description == "[:]")
    }

    @Test func encodesAsAnObjectOfValuesByName() throws {
        let values: FieldValues = ["Id": 7, "Name": "Acme", "Note": .null]
        let data = try JSONEncoder().encode(values)
        #expect(try JSONDecoder().decode([String: Value].self, from: data) == values.dictionary)
        #expect(try JSONDecoder().decode(FieldValues.self, from: data) == values)
        #expect(try JSONDecoder().decode(FieldValues.self, from: Data("{}".utf8)).isEmpty)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(FieldValues.self, from: Data("[1]".utf8)) }
    }

    @Test func aBuilderSharesNamesOnlyWhereThatCostsLittle() {
        var builder = FieldValuesBuilder()
        let first = builder.make(.new, names: ["A", "B", "C"], values: [1, 2, 3])
        let same = builder.make(.new, names: ["A", "B", "C"], values: [4, 5, 6])
        let fewer = builder.make(.new, names: ["C", "A"], values: [7, 8])
        #expect(same.names === first.names && fewer.names === first.names)
        #expect(fewer == ["A": 8, "C": 7] && fewer.count == 2 && fewer["B"] == nil)
        let one = builder.make(.new, names: ["B"], values: [9])   // a third of the names: its own list
        #expect(one.names !== first.names && one.names.names == ["B"])
        let twice = builder.make(.new, names: ["X", "Y", "X"], values: [1, 2, 3])   // the last of a name counts
        #expect(twice == ["X": 3, "Y": 2] && twice.keys == ["X", "Y"])
        #expect(builder.make(.new, names: [], values: []).isEmpty)
    }

    @Test func aReadDeltasChangesShareOneListOfNamesOldAndNewAlike() throws {
        let table = try makeClients()
        table.recordsEdits = true
        for row in table.rows { try row.setValue("Renamed", forKey: "ClientName") }
        let deltas = [try table.makeDelta()]
        for read in [try DeltaBinary.decode(try DeltaBinary.encode(deltas))[0], try DeltaJSON.decode(try DeltaJSON.encode(deltas))[0]] {
            #expect(read == deltas[0])
            let names = read.changes[0].oldValues.names
            #expect(read.changes.allSatisfy { $0.oldValues.names === names && $0.newValues.names === names })
            let edits = read.changes.compactMap { $0.edits?.first?.values.names }
            #expect(edits.count == read.changes.count && edits.allSatisfy { $0 === edits[0] })
        }
    }

    @Test func aWideChangeDoesNotMakeEveryNarrowOneAfterItWide() throws {
        // One change naming 2,000 fields, then 2,000 naming one each: no set holds room for them all.
        let names = (0..<2_000).map { "F\($0)" }
        var changes = [DeltaChange(changeId: 1, type: .insert, newValues: FieldValues(uniqueKeysWithValues: names.map { ($0, Value.integer(1)) }))]
        for id in 2...2_001 { changes.append(DeltaChange(changeId: id, type: .insert, newValues: [names[id % names.count]: .integer(Int64(id))])) }
        let delta = Delta(tableName: "Wide", keyFields: ["F0"], loggedFields: [], changes: changes)
        for read in [try DeltaBinary.decodeRequest(try DeltaBinary.encode([delta])).deltas[0],
                     try DeltaJSON.decodeRequest(try DeltaJSON.encode([delta])).deltas[0]] {
            #expect(read == delta)
            #expect(read.changes.dropFirst().allSatisfy { $0.newValues.names.names.count <= 2 })
        }
    }
}

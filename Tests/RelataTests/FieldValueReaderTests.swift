import Testing
@testable import Relata

/// A reader gives what a lookup by name gives, whatever names, order or size each set of values has.
@Suite(.timeLimit(.minutes(1))) struct FieldValueReaderTests {
    static let names = ["Id", "Name", "Price", "Note"]

    static func expectReads(_ values: FieldValues, with reader: inout FieldValueReader, sourceLocation: SourceLocation = #_sourceLocation) {
        reader.load(values)
        for (position, name) in reader.names.enumerated() {
            #expect(reader[position] == values[name], "\(name) of \(values)", sourceLocation: sourceLocation)
        }
    }

    @Test func copiesOfOneSetAreReadByPosition() {
        var reader = FieldValueReader(names: Self.names)
        let template: FieldValues = ["Id": 1, "Name": "a", "Price": 2.5, "Extra": true]
        for number in 0..<50 {
            var values = template
            values["Id"] = .integer(Int64(number))
            values["Name"] = number.isMultiple(of: 3) ? nil : .string("n\(number)")   // some without a Name
            Self.expectReads(values, with: &reader)
        }
    }

    @Test func setsOfManyOrdersSizesAndNamesAreReadByName() {
        var reader = FieldValueReader(names: Self.names)
        var made: [FieldValues] = []
        for number in 0..<40 {
            var values = FieldValues()
            for name in (Self.names + ["Other\(number % 5)"]).shuffled() where Bool.random() || name == "Id" {
                values[name] = .integer(Int64(number))
            }
            made.append(values)
        }
        made.append([:])
        made.append(["id": 1, "NAME": "not these names"])
        made.append(FieldValues(["Note": "from a dictionary", "Price": .null]))
        for values in made + made.reversed() { Self.expectReads(values, with: &reader) }
        let template: FieldValues = ["Note": "x", "Id": 9]
        for _ in 0..<10 { Self.expectReads(template, with: &reader) }
    }

    @Test func aNameInAnotherCaseOrNormalFormIsTheSameOnlyAsALookupSaysSo() {
        var reader = FieldValueReader(names: ["Café", "Id"])
        let decomposed = "Cafe\u{301}"
        Self.expectReads([decomposed: "d", "Id": 1], with: &reader)   // canonically equivalent: the same name
        #expect(reader[0] == "d")
        Self.expectReads(["café": "lower", "Id": 2], with: &reader)
        #expect(reader[0] == nil)
    }
}

import Foundation
import Testing
@testable import Relata

@Suite struct SortingTests {
    func files() throws -> DataTable {
        let table = try DataTable(name: "Files", fields: [FieldDefinition("Name", .string), FieldDefinition("Size", .integer)])
        try table.loadRows([["File 10", 3], ["file 2", 1], ["File 1", .null], ["apple", 2], ["Zebra", 2]])
        return table
    }

    @Test func standardSortIsCaseSensitive() throws {
        let names = try files().rows(sortedBy: "Name").map { $0["Name"].text }
        #expect(names == ["File 1", "File 10", "Zebra", "apple", "file 2"])
    }

    @Test func localizedCaseInsensitive() throws {
        let names = try files().rows(sortedBy: "Name", using: .localizedCaseInsensitive).map { $0["Name"].text }
        #expect(names == ["apple", "File 1", "File 10", "file 2", "Zebra"])
    }

    @Test func finderStyleIsNumericAware() throws {
        let names = try files().rows(sortedBy: "Name", using: .finderStyle).map { $0["Name"].text }
        #expect(names == ["apple", "File 1", "file 2", "File 10", "Zebra"])
    }

    @Test func numbersNullsFirstAndStableTies() throws {
        let table = try files()
        #expect(try table.rows(sortedBy: "Size").map { $0["Name"].text } == ["File 1", "file 2", "apple", "Zebra", "File 10"])
        #expect(try table.rows(sortedBy: "Size", ascending: false).map { $0["Name"].text } == ["File 10", "apple", "Zebra", "file 2", "File 1"])
    }

    @Test func sortSeesPendingValuesAndLeavesTheTableAlone() throws {
        let table = try files()
        try table.rows[0].setValue(0, forKey: "Size")
        let sorted = try table.rows(sortedBy: "Size")
        #expect(sorted.map { $0["Name"].text } == ["File 1", "File 10", "file 2", "apple", "Zebra"])
        #expect(table.rows.map { $0["Name"].text } == ["File 10", "file 2", "File 1", "apple", "Zebra"])
    }

    @Test func filterAndSortCombined() throws {
        let table = try files()
        let rows = try table.rows(where: "Size >= :min", parameters: ["min": 2], sortedBy: "Name", ascending: false,
                                  using: .localizedCaseInsensitive)
        #expect(rows.map { $0["Name"].text } == ["Zebra", "File 10", "apple"])
    }

    @Test func sortByCalculatedFieldAndSwiftPredicate() throws {
        let table = try files()
        try table.addCalculatedField(name: "Shout", type: .string) { .string($0["Name"].text.uppercased()) }
        #expect(try table.rows(sortedBy: "Shout").first?["Name"] == "apple")
        #expect(table.rows { $0["Size"] == 2 }.count == 2)
        #expect(relataError { _ = try table.rows(sortedBy: "Nope") }?.code == .unknownField)
    }
}

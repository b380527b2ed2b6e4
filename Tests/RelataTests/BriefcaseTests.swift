import Foundation
import Testing
@testable import Relata

/// Briefcases: every data type and row state survives save and load; pending
/// changes give the same delta afterwards; bad files give clear errors.
@Suite struct BriefcaseTests {
    static let fields = [
        FieldDefinition("Id", .autoInc, primaryKey: true),
        FieldDefinition("Count", .integer),
        FieldDefinition("Ratio", .float),
        FieldDefinition("Price", .currency),
        FieldDefinition("Active", .boolean),
        FieldDefinition("Name", .string, size: 40),
        FieldDefinition("When", .dateTime),
        FieldDefinition("Ref", .guid),
        FieldDefinition("Data", .blob),
        FieldDefinition("ParentId", .integer),
    ]
    static let guid = UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF")!

    /// A table with a row in every state, every type, NULLs, a failed change and rows in edit mode.
    static func makeTable() throws -> DataTable {
        let table = try DataTable(name: "Things", fields: fields)
        try table.loadRows([
            [1, 10, 0.5, .decimal(Decimal(string: "19.99")!), true, "plain", .date(Date(timeIntervalSince1970: 1_700_000_000.25)),
             .guid(guid), .blob(Data([0, 1, 255])), .null],
            [2, .null, .null, .null, .null, .null, .null, .null, .null, .null],
            [3, 30, -1.5, .decimal(Decimal(string: "-0.001")!), false, "日本 😀", .date(Date(timeIntervalSince1970: -5)),
             .guid(UUID()), .blob(Data()), 1],
            [4, 40, 4, 4, true, "to delete", .null, .null, .null, .null],
            [5, 50, 5, 5, true, "failed", .null, .null, .null, .null],
            [6, 60, 6, 6, true, "editing", .null, .null, .null, .null],
        ])
        let rows = table.rows
        try rows[1].setValue("now named", forKey: "Name")                  // modified
        try rows[1].setValue(.null, forKey: "Ratio")
        try table.removeRow(rows[3])                                        // deleted
        try rows[4].setValue(55, forKey: "Count")                           // modified, then failed
        var delta = try table.makeDelta()
        for index in delta.changes.indices {
            if delta.changes[index].oldValues["Id"] == 5 { delta.changes[index].fail("Count 55 is not allowed") } else { delta.changes[index].resolve() }
        }
        try table.accept(delta)                                             // everything else resolved
        try rows[4].setValue(56, forKey: "Count")
        let parent = try table.addNewRow(values: ["Name": "new parent", "Count": 7])   // added, key -1
        _ = try table.addNewRow(values: ["Name": "new child", "ParentId": parent["Id"]]) // refers to -1
        try table.removeRow(rows[2])                                        // deleted after acceptance
        try rows[5].edit()                                                  // modified row in edit mode
        try rows[5].setValue("half typed", forKey: "Name")
        let draft = try table.addNewRow(values: ["Name": "draft"], inEditMode: true)   // added in edit mode
        try draft.setValue(.blob(Data([9, 9])), forKey: "Data")
        return table
    }

    /// Everything a user can see of a table, slot by slot.
    static func snapshot(_ table: DataTable) -> [String] {
        (0..<table.slotCount).map { slot in
            let row = table.row(atSlot: slot)
            let current = table.fields.map { "\((try? row.value(forKey: $0.name)) ?? .null)" }
            let original = table.fields.map { "\(row.originalValue(forKey: $0.name) ?? .null)" }
            return "\(row.rowState) edit=\(row.isInEditMode) change=\(row.changeId) failure=\(row.failureMessage ?? "-") "
                + "current=\(current) original=\(original)"
        }
    }

    func temporaryFile(_ name: String = "test.briefcase") -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("relata-briefcase-\(UUID().uuidString)").appendingPathComponent(name)
    }

    func saveAndLoad(_ table: DataTable, layout: Briefcase.Layout) throws -> Briefcase {
        let url = temporaryFile()
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let briefcase = Briefcase()
        briefcase.addTable(table)
        briefcase.properties = ["DataVersion": "0.1", "Note": "ünïcode ✓"]
        try briefcase.save(to: url, layout: layout)
        return try Briefcase(contentsOf: url)
    }

    @Test(arguments: [Briefcase.Layout.file, .folder])
    func everyTypeAndStateRoundTrips(layout: Briefcase.Layout) throws {
        let table = try Self.makeTable()
        let states = Set((0..<table.slotCount).map { table.row(atSlot: $0).rowState })
        #expect(states == Set(RowState.allCases), "the fixture has a row in every state")
        let loaded = try saveAndLoad(table, layout: layout)
        #expect(loaded.properties == ["DataVersion": "0.1", "Note": "ünïcode ✓"])
        let copy = try #require(loaded.table(named: "things"))
        #expect(copy.fields == table.fields)
        #expect(Self.snapshot(copy) == Self.snapshot(table))
        #expect(copy.rowCount == table.rowCount)
        #expect(copy.deletedRows.map { $0["Id"] } == [3], "the accepted deletion is gone; the later one is pending")
        #expect(copy.rows.first { $0["Name"] == "failed" }?.failureMessage == "Count 55 is not allowed")
    }

    @Test func pendingChangesGiveTheSameDeltaAfterALoad() throws {
        let table = try Self.makeTable()
        try table.rows.first { $0.isInEditMode }?.post()
        let before = try table.makeDelta()
        let copy = try #require(try saveAndLoad(table, layout: .file).tables.first)
        #expect(try copy.makeDelta() == before)
        #expect(before.changes.map { "\($0.type) \($0.oldValues["Id"] ?? $0.newValues["Id"] ?? .null)" }
                == ["update 5", "insert -1", "insert -2", "delete 3", "update 6"])
    }

    @Test func temporaryKeysKeepTheirLinksAndTheirCounter() throws {
        let copy = try #require(try saveAndLoad(try Self.makeTable(), layout: .file).tables.first)
        let parent = try #require(copy.rows.first { $0["Name"] == "new parent" })
        let child = try #require(copy.rows.first { $0["Name"] == "new child" })
        #expect(parent["Id"] == -1)
        #expect(child["ParentId"] == -1)
        #expect(try copy.addNewRow()["Id"] == -4, "new rows after a load do not reuse temporary keys")
        // The data source assigns real keys; references follow.
        try copy.addForeignKey("ParentId", references: copy, field: "Id")
        var delta = try copy.makeDelta()
        for index in delta.changes.indices where delta.changes[index].type == .insert {
            let key = delta.changes[index].newValues["Id"]!.integerValue!
            delta.changes[index].resolve(refreshing: ["Id": .integer(1000 - key)])
        }
        try copy.accept(delta)
        #expect(parent["Id"] == 1001)
        #expect(child["ParentId"] == 1001)
    }

    @Test func tablesAreManagedByName() {
        let briefcase = Briefcase()
        let a = try! DataTable(name: "A", fields: [FieldDefinition("X", .integer)])
        let b = try! DataTable(name: "B", fields: [FieldDefinition("X", .integer)])
        briefcase.addTable(a)
        briefcase.addTable(b)
        briefcase.addTable(try! DataTable(name: "a", fields: [FieldDefinition("Y", .string)]))
        #expect(briefcase.tableNames == ["a", "B"])
        #expect(briefcase.table(named: "b") === b)
        #expect(briefcase.removeTable(named: "A")?.name == "a")
        #expect(briefcase.tableNames == ["B"])
        #expect(briefcase.removeTable(named: "nope") == nil)
    }
}

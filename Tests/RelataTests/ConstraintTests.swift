import Foundation
import Testing
@testable import Relata

/// Tables enforce what a database would: primary keys unique and set, required values and
/// whole lines when data loads — each refusal naming table, key, row or line.
@Suite struct ConstraintTests {
    let fields = [
        FieldDefinition("Id", .integer, primaryKey: true),
        FieldDefinition("Name", .string, required: true),
        FieldDefinition("Note", .string),
    ]

    func table() throws -> DataTable {
        try DataTable(name: "Items", fields: fields, csv: "Id,Name,Note\n1,a,\n2,b,x\n")
    }

    @Test func anInsertWithAKeyInUseIsRefused() throws {
        let items = try table()
        let error = relataError { try items.addNewRow(values: ["Id": 1, "Name": "again"]) }
        #expect(error?.code == .constraintViolation)
        #expect(error?.message == "the primary key (Id=1) is already used by row (Id=1)")
        #expect(error?.table == "Items")
        #expect(items.rowCount == 2, "nothing was added")
    }

    @Test func anInsertWithoutAKeyIsRefused() throws {
        let items = try table()
        let error = relataError { try items.addNewRow(values: ["Name": "no key"]) }
        #expect(error?.code == .constraintViolation)
        #expect(error?.field == "Id")
        #expect(error?.message.contains("cannot be NULL") == true)
        #expect(items.rowCount == 2)
    }

    @Test func changingAKeyToOneInUseIsRefusedAndTheRowStaysAsItWas() throws {
        let items = try table()
        let error = relataError { try items.rows[1].setValue(1, forKey: "Id") }
        #expect(error?.message == "the primary key (Id=1) is already used by row (Id=1)")
        #expect(error?.row == "row (Id=2)")
        #expect(items.rows[1]["Id"] == 2)
        #expect(items.rows[1].rowState == .unchanged)
        #expect(relataError { try items.rows[1].setValue(.null, forKey: "Id") }?.code == .constraintViolation)
    }

    @Test func editModeChecksTheKeyWhenPosted() throws {
        let items = try table()
        let row = try items.addNewRow(values: ["Name": "later"], inEditMode: true)
        try row.setValue(2, forKey: "Id")
        #expect(relataError { try row.post() }?.message == "the primary key (Id=2) is already used by row (Id=2)")
        try row.setValue(3, forKey: "Id")
        try row.post()
        #expect(items.rowCount == 3)
        try items.rows[0].edit()
        try items.rows[0].setValue(3, forKey: "Id")
        #expect(relataError { try items.rows[0].post() }?.code == .constraintViolation)
    }

    @Test func aKeyFreedByAChangeCanBeTakenAgain() throws {
        let items = try table()
        try items.rows[0].setValue(10, forKey: "Id")
        try items.addNewRow(values: ["Id": 1, "Name": "takes the old key"])
        #expect(items.rowCount == 3)
    }

    @Test func duplicateKeysInDataFailTheLoadNamingTheLine() {
        let csv = relataError { _ = try DataTable(name: "Items", fields: fields, csv: "Id,Name,Note\n1,a,\n2,b,\n1,c,\n") }
        #expect(csv?.code == .constraintViolation)
        #expect(csv?.location == "line 4")
        #expect(csv?.message.contains("(Id=1) is already used") == true)
        let json = relataError {
            _ = try DataTable(name: "Items", fields: fields, json: Data(#"[{"Id": 1, "Name": "a"}, {"Id": 1, "Name": "b"}]"#.utf8))
        }
        #expect(json?.location == "object 2")
        let rows = relataError { try DataTable(name: "Items", fields: fields).loadRows(named: [["Id": 5, "Name": "a"], ["Id": 5, "Name": "b"]]) }
        #expect(rows?.location == "row 2 to load")
        let nullKey = relataError { _ = try DataTable(name: "Items", fields: fields, csv: "Id,Name,Note\n,a,\n") }
        #expect(nullKey?.message.contains("cannot be NULL") == true)
        #expect(nullKey?.location == "line 2")
    }

    @Test func requiredValuesAreCheckedWhenDataLoads() {
        let csv = relataError { _ = try DataTable(name: "Items", fields: fields, csv: "Id,Name,Note\n1,a,\n2,,x\n") }
        #expect(csv?.code == .requiredValueMissing)
        #expect(csv?.field == "Name")
        #expect(csv?.location == "line 3")
        let json = relataError { _ = try DataTable(name: "Items", fields: fields, json: Data(#"[{"Id": 1}]"#.utf8)) }
        #expect(json?.field == "Name")
        #expect(json?.location == "object 1")
        #expect(throws: Never.self) { _ = try DataTable(name: "Items", fields: fields, csv: "Id,Name,Note\n1,\"\",\n") }
    }

    @Test func aLineWithTooFewOrTooManyCellsIsAnError() {
        let few = relataError { _ = try DataTable(name: "Items", fields: fields, csv: "Id,Name,Note\n1,a\n") }
        #expect(few?.code == .invalidImport)
        #expect(few?.location == "line 2")
        #expect(few?.message == "the line has 2 cells, the header names 3 columns")
        let many = relataError { _ = try DataTable(name: "Items", fields: fields, csv: "Id,Name,Note\n1,a,b,c\n") }
        #expect(many?.location == "line 2")
    }

    @Test func aFieldTheDataLeavesOutGetsItsDefault() throws {
        let fields = [FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("Status", .string, required: true, defaultValue: "open")]
        let csv = try DataTable(name: "T", fields: fields, csv: "Id\n1\n")
        #expect(csv.rows[0]["Status"] == "open")
        let json = try DataTable(name: "T", fields: fields, json: Data(#"[{"Id": 1}, {"Id": 2, "Status": "shut"}]"#.utf8))
        #expect(json.rows.map { $0["Status"] } == ["open", "shut"])
        let explicitNull = relataError { _ = try DataTable(name: "T", fields: fields, json: Data(#"[{"Id": 1, "Status": null}]"#.utf8)) }
        #expect(explicitNull?.code == .requiredValueMissing, "null is NULL, not the default")
        let emptyCell = relataError { _ = try DataTable(name: "T", fields: fields, csv: "Id,Status\n1,\n") }
        #expect(emptyCell?.code == .requiredValueMissing, "an empty cell is NULL, not the default")
    }
}

extension ConstraintTests {
    /// Cancelling a change gives a row its original key back, unless another row took it meanwhile.
    @Test func aCancelledChangeCannotBringBackAKeyInUse() throws {
        let items = try table()
        let first = items.rows[0]
        try first.setValue(10, forKey: "Id")
        try items.addNewRow(values: ["Id": 1, "Name": "took the key"])
        let error = relataError { try first.cancel() }
        #expect(error?.message == "the change cannot be cancelled: the row's original key (Id=1) is now used by row (Id=1)")
        #expect(first["Id"] == 10 && first.rowState == .modified, "the row is as it was")
        #expect(relataError { try first.cancelChange(forKey: "Id") }?.code == .constraintViolation)

        let second = items.rows[1]
        try items.removeRow(second)
        try items.addNewRow(values: ["Id": 2, "Name": "took the key"])
        #expect(relataError { try items.cancelChange(for: second) }?.code == .constraintViolation)
        #expect(second.rowState == .deleted)
    }
}

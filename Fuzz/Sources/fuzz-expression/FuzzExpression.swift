import Foundation
import FuzzSupport
import Relata

/// The expression language: parsed, then evaluated as a filter over a small table with parameters.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzExpression(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let text = fuzzText(start, count)
    guard (try? Expression(text)) != nil else { return 0 }
    _ = try? sampleTable.rows(where: text, parameters: ["id": 1, "name": "Acme", "when": .date(Date(timeIntervalSince1970: 0))])
    return 0
}

nonisolated(unsafe) let sampleTable: DataTable = {
    let table = try! DataTable(name: "T", fields: [
        FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("Name", .string),
        FieldDefinition("Price", .currency), FieldDefinition("When", .dateTime), FieldDefinition("Flag", .boolean),
    ])
    try! table.loadRows(named: [
        ["Id": 1, "Name": "Acme", "Price": .decimal(12.5), "When": .date(Date(timeIntervalSince1970: 0)), "Flag": true],
        ["Id": 2, "Name": .null, "Price": .null, "When": .null, "Flag": .null],
        ["Id": 3, "Name": "", "Price": .decimal(-1), "When": .date(Date(timeIntervalSince1970: 1e9)), "Flag": false],
    ])
    return table
}()

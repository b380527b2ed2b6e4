import Foundation
import FuzzSupport
import Relata

/// DA SQL: any text either parses into a query or is refused with a line and column; a query
/// that parses is checked and run over two small tables — never a trap.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDASQL(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let query = try? DASQLQuery(fuzzText(start, count)) else { return 0 }
    _ = query.parameterNames
    _ = query.tableNames
    _ = try? DataTable(query: query, parameters: ["since": .date(Date(timeIntervalSince1970: 0)), "skip": 1, "big": 10, "min": 1],
                       over: sampleTables)
    return 0
}

nonisolated(unsafe) let sampleTables: [DataTable] = {
    let clients = try! DataTable(name: "Clients", fields: [
        FieldDefinition("ClientId", .integer, primaryKey: true), FieldDefinition("ClientName", .string),
        FieldDefinition("Active", .boolean), FieldDefinition("CreditLimit", .currency),
    ])
    try! clients.loadRows([[1, "Acme", true, .decimal(1000)], [2, .null, false, .null], [3, "", .null, .decimal(-1)]])
    let orders = try! DataTable(name: "Orders", fields: [
        FieldDefinition("OrderId", .integer, primaryKey: true), FieldDefinition("ClientId", .integer),
        FieldDefinition("OrderDate", .dateTime), FieldDefinition("Total", .float), FieldDefinition("Status", .string),
    ])
    try! orders.loadRows([[10, 1, .date(Date(timeIntervalSince1970: 0)), 12.5, "open"], [11, .null, .null, .null, .null],
                          [12, 3, .date(Date(timeIntervalSince1970: 1e9)), -1.0, "void"]])
    return [clients, orders]
}()

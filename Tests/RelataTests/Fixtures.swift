import Foundation
import Testing
@testable import Relata

/// The Clients table of the seeds, with three rows.
func makeClients() throws -> DataTable {
    let table = try DataTable(name: "Clients", fields: clientFields)
    try table.loadRows([
        [1, "Acme", "555-0100", "1 Road Runner Way", .null, 0.05],
        [2, "Globex", .null, "Cypress Creek", "Big account", 0.1],
        [3, "Initech", "555-0199", .null, .null, 0.0],
    ])
    return table
}

let clientFields = [
    FieldDefinition("ClientId", .autoInc, primaryKey: true),
    FieldDefinition("ClientName", .string, size: 50, required: true),
    FieldDefinition("ContactPhone", .string, size: 20),
    FieldDefinition("ContactAddress", .string, size: 100),
    FieldDefinition("AdditionalInfo", .memo),
    FieldDefinition("ClientDiscount", .float, defaultValue: 0.0),
]

/// Orders and order details with a foreign key and a lookup, for key replacement tests.
func makeOrders() throws -> (orders: DataTable, details: DataTable) {
    let orders = try DataTable(name: "Orders", fields: [
        FieldDefinition("OrderId", .autoInc, primaryKey: true),
        FieldDefinition("Customer", .string, required: true),
    ])
    try orders.loadRows([[10, "Acme"]])
    let details = try DataTable(name: "OrderDetails", fields: [
        FieldDefinition("DetailId", .autoInc, primaryKey: true),
        FieldDefinition("OrderId", .integer, required: true),
        FieldDefinition("Quantity", .integer),
    ])
    try details.loadRows([[100, 10, 2]])
    try details.addLookupField(name: "OrderCustomer", sourceField: "OrderId", lookupTable: orders,
                               lookupKeyField: "OrderId", lookupResultField: "Customer")
    return (orders, details)
}

/// Runs `body` and returns the RelataError it throws; records an issue if it throws none.
func relataError(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> RelataError? {
    do {
        try body()
        Issue.record("expected a RelataError, nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch let error as RelataError {
        return error
    } catch {
        Issue.record("expected a RelataError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// A snapshot of everything observable about a row, to prove an operation left it untouched.
func snapshot(_ row: DataTableRow) throws -> String {
    let values = try row.table.fields.map { "\($0.name)=\(try row.value(forKey: $0.name))/\(String(describing: row.originalValue(forKey: $0.name)))" }
    return "\(row.rowState) edit=\(row.isInEditMode) locked=\(row.isLocked) id=\(row.changeId) " + values.joined(separator: ",")
}

import Foundation
import Testing
@testable import Relata

/// Calculated and lookup fields.
@Suite struct VirtualFieldTests {
    func lines() throws -> DataTable {
        let table = try DataTable(name: "Lines", fields: [
            FieldDefinition("Id", .integer, primaryKey: true),
            FieldDefinition("Quantity", .integer),
            FieldDefinition("Price", .float),
            FieldDefinition("Note", .string),
        ])
        try table.loadRows([[1, 2, 10.0, .null], [2, 3, 1.5, .null]])
        return table
    }

    @Test func calculatedFieldIsAFunctionOfTheRow() throws {
        let table = try lines()
        try table.addCalculatedField(name: "Total", type: .float) { row in
            .double((row.Quantity.doubleValue ?? 0) * (row.Price.doubleValue ?? 0))
        }
        #expect(table.rows[0]["Total"] == 20.0)
        try table.rows[0].setValue(5, forKey: "Quantity")
        #expect(table.rows[0]["Total"] == 50.0)
        #expect(relataError { try table.rows[0].setValue(1.0, forKey: "Total") }?.code == .readOnlyField)
        #expect(try table.makeDelta().changes[0].newValues["Total"] == nil, "never in a delta")
    }

    @Test func cachedValuesAreRecomputedOnlyWhenAReadFieldChanges() throws {
        let table = try lines()
        var calls = 0
        try table.addCalculatedField(name: "Total", type: .float, cached: true) { row in
            calls += 1
            return .double((row.Quantity.doubleValue ?? 0) * (row.Price.doubleValue ?? 0))
        }
        let row = table.rows[0]
        #expect(row["Total"] == 20.0)
        #expect(row["Total"] == 20.0)
        #expect(calls == 1)
        try row.setValue("unrelated", forKey: "Note")
        #expect(row["Total"] == 20.0)
        #expect(calls == 1, "Note was not read, so the cached value stays")
        try row.setValue(4, forKey: "Quantity")
        #expect(row["Total"] == 40.0)
        #expect(calls == 2)
        try row.cancel()
        #expect(row["Total"] == 20.0)
        #expect(calls == 3)
        table.clearCalculatedCaches()
        _ = row["Total"]
        #expect(calls == 4)
    }

    @Test func calculationErrorsNameTheFieldAndRow() throws {
        struct Boom: Error {}
        let table = try lines()
        try table.addCalculatedField(name: "Bad", type: .integer) { _ in throw Boom() }
        try table.addCalculatedField(name: "WrongType", type: .integer) { _ in "text" }
        let error = relataError { _ = try table.rows[1].value(forKey: "Bad") }
        #expect(error?.code == .calculationFailed)
        #expect(error?.field == "Bad")
        #expect(error?.row == "row (Id=2)")
        #expect(relataError { _ = try table.rows[0].value(forKey: "WrongType") }?.code == .calculationFailed)
        #expect(relataError { try table.addCalculatedField(name: "Price", type: .float) { _ in .null } }?.code == .invalidDefinition)
    }

    /// Values computed many at once are converted to the field's type as one computed alone is.
    @Test func valuesComputedInBulkAreConvertedAndCheckedLikeOneValue() throws {
        let table = try lines()
        func add(_ name: String, _ type: DataType, _ results: [Value]) throws {
            try table.addCalculatedField(name: name, type: type, compute: { row in results[Int(row.Id.integerValue ?? 1) - 1] },
                                         computeMany: { rows in rows.map { results[Int($0.Id.integerValue ?? 1) - 1] } })
        }
        try add("Signed", .float, [.double(-0.0), .integer(3)])
        try add("Single", .singleFloat, [.double(0.1), .null])
        try add("Small", .byte, [.integer(255), .double(7)])
        try add("Big", .byte, [.integer(1), .integer(256)])
        try add("Infinite", .float, [.double(2), .double(.infinity)])
        let signed = try table.values(ofField: "Signed")
        #expect(signed == [.double(0), .double(3)])
        #expect(signed.first?.doubleValue?.sign == .plus, "-0 is stored as 0")
        #expect(try table.values(ofField: "Single") == [.double(Double(Float(0.1))), .null])
        #expect(try table.values(ofField: "Small") == [.integer(255), .integer(7)])
        for name in ["Big", "Infinite"] {
            let error = relataError { _ = try table.values(ofField: name) }
            #expect(error?.code == .calculationFailed && error?.row == "row (Id=2)" && error?.field == name, "\(String(describing: error))")
            #expect(relataError { _ = try table.rows[1].value(forKey: name) }?.code == .calculationFailed, "alone as in bulk")
        }
    }

    @Test func lookupFieldFollowsBothTables() throws {
        let (orders, details) = try makeOrders()
        let line = details.rows[0]
        #expect(line["OrderCustomer"] == "Acme")
        try orders.rows[0].setValue("Acme Ltd", forKey: "Customer")
        #expect(line["OrderCustomer"] == "Acme Ltd", "a change in the looked-up table shows at once")
        try orders.addNewRow(values: ["Customer": "Initech"])
        try line.setValue(-1, forKey: "OrderId")
        #expect(line["OrderCustomer"] == "Initech", "a change of the source field shows at once")
        try line.setValue(999, forKey: "OrderId")
        #expect(line["OrderCustomer"] == .null)
        #expect(try details.rows(where: "OrderCustomer IS NULL").count == 1, "lookups work in filters")
    }

    @Test func cachedCalculationOverALookupIsRefreshedWhenTheLookedUpTableChanges() throws {
        let (orders, details) = try makeOrders()
        try details.addCalculatedField(name: "Label", type: .string, cached: true) { row in
            .string("\(row.OrderCustomer.text) x\(row.Quantity.text)")
        }
        #expect(details.rows[0]["Label"] == "Acme x2")
        try orders.rows[0].setValue("Umbrella", forKey: "Customer")
        #expect(details.rows[0]["Label"] == "Umbrella x2")
    }

    @Test func lookupDefinitionErrors() throws {
        let (orders, details) = try makeOrders()
        let table = relataError {
            try details.addLookupField(name: "X", sourceField: "OrderId", lookupTable: orders,
                                       lookupKeyField: "Nope", lookupResultField: "Customer")
        }
        #expect(table?.code == .unknownField)
        #expect(table?.table == "Orders")
        #expect(table?.field == "Nope")
        let source = relataError {
            try details.addLookupField(name: "X", sourceField: "Missing", lookupTable: orders,
                                       lookupKeyField: "OrderId", lookupResultField: "Customer")
        }
        #expect(source?.table == "OrderDetails")
        let result = relataError {
            try details.addLookupField(name: "X", sourceField: "OrderId", lookupTable: orders,
                                       lookupKeyField: "OrderId", lookupResultField: "Missing")
        }
        #expect(result?.code == .unknownField)
    }
}

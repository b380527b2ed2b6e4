import Foundation
import Relata
import Testing
import RelataScript
@testable import RelataTools
import RelataTestSupport

/// Edits files (`relata run --edits`): reading them, and making them through the rules.
@Suite struct EditTests {
    func decode(_ json: String) throws -> [Edit] {
        try Edit.list(json: Data(json.utf8), name: "edits.json")
    }

    @Test func readsEveryKindOfEdit() throws {
        let edits = try decode("""
            [{"insert": "Orders", "values": {"ClientId": 1}, "as": "o"},
             {"insert": "OrderDetails", "values": {"OrderId": {"ref": "o.OrderId"}, "Quantity": 2}},
             {"update": "Orders", "key": 10, "values": {"Status": "closed"}},
             {"delete": "Pairs", "key": [1, "b"]},
             {"delete": "Orders", "key": {"ref": "o.OrderId"}}]
            """)
        #expect(edits[0] == Edit(.insert, table: "Orders", values: ["ClientId": .value(.integer(1))], alias: "o"))
        #expect(edits[1].values["OrderId"] == .reference(alias: "o", field: "OrderId"))
        #expect(edits[2].summary == "update Orders (key 10)")
        #expect(edits[3].key == [.value(.integer(1)), .value(.string("b"))])
        #expect(edits[4].key == [.reference(alias: "o", field: "OrderId")])
        #expect(edits[4].summary == "delete Orders (key ref o.OrderId)")
    }

    @Test func malformedEditsSayWhere() throws {
        let none = #expect(throws: RelataError.self) { try decode(#"[{"values": {}}]"#) }
        #expect(none?.description.contains("exactly one of \"insert\", \"update\" or \"delete\"") == true)
        let noKey = #expect(throws: RelataError.self) { try decode(#"[{"insert": "A"}, {"delete": "B"}]"#) }
        #expect(noKey?.description.contains("[1]") == true)
        #expect(noKey?.description.contains("delete needs the key") == true)
        let badRef = #expect(throws: RelataError.self) { try decode(#"[{"insert": "A", "values": {"X": {"id": 1}}}]"#) }
        #expect(badRef?.description.contains("[0].values.X") == true)
    }

    @Test func editsRunThroughTheRules() throws {
        let adapter = try makeAdapter(details: """
            function onNewRow(row) { row.Quantity = 1; }
            function beforePost(row) { if (row.Quantity > 10) fail('at most 10 per line'); }
            """)
        var aliases: [String: DataTableRow] = [:]
        let edits = try decode("""
            [{"insert": "Orders", "values": {"ClientId": 1, "Status": "open"}, "as": "order"},
             {"insert": "OrderDetails", "values": {"OrderId": {"ref": "order.OrderId"}, "Product": "Bolt"}, "as": "line"},
             {"update": "OrderDetails", "key": 100, "values": {"Quantity": 4, "UnitPrice": "1.25"}}]
            """)
        let order = try adapter.perform(edits[0], aliases: &aliases)
        let line = try adapter.perform(edits[1], aliases: &aliases)
        #expect(line["OrderId"] == order["OrderId"])
        #expect(line["Quantity"] == 1, "onNewRow set the default")
        let updated = try adapter.perform(edits[2], aliases: &aliases)
        #expect(updated["UnitPrice"] == .decimal(Decimal(string: "1.25")!))

        let refused = try decode(#"[{"update": "OrderDetails", "key": 100, "values": {"Quantity": 11}}]"#)[0]
        let error = #expect(throws: ScriptError.self) { try adapter.perform(refused, aliases: &aliases) }
        #expect(error?.message == "at most 10 per line")
        #expect(updated["Quantity"] == 4, "a refused edit leaves the row as it was")
    }

    @Test func badEditsNameTableFieldAndKey() throws {
        let adapter = try makeAdapter()
        var aliases: [String: DataTableRow] = [:]
        func failure(_ json: String) throws -> RelataError? {
            let edit = try decode(json)[0]
            return #expect(throws: RelataError.self) { try adapter.perform(edit, aliases: &aliases) }
        }
        #expect(try failure(#"[{"insert": "Nope", "values": {}}]"#)?.code == .unknownTable)
        let field = try failure(#"[{"update": "OrderDetails", "key": 100, "values": {"Qty": 1}}]"#)
        #expect(field?.description.contains("OrderDetails.Qty") == true)
        #expect(field?.description.contains("fields: DetailId, OrderId, Product, Quantity, UnitPrice") == true)
        let type = try failure(#"[{"update": "OrderDetails", "key": 100, "values": {"Quantity": "many"}}]"#)
        #expect(type?.description.hasPrefix("OrderDetails.Quantity") == true)
        #expect(try failure(#"[{"delete": "OrderDetails", "key": 999}]"#)?.description == "OrderDetails: no row has the key DetailId=999")
        #expect(try failure(#"[{"insert": "OrderDetails", "values": {"OrderId": {"ref": "x.OrderId"}}}]"#)?.description.contains("no earlier insert has \"as\": \"x\"") == true)
        try adapter.addCalculatedField(name: "Total", type: .currency, table: "OrderDetails",
                                       function: "function (row) { return row.Quantity * row.UnitPrice }")
        let calculated = try failure(#"[{"update": "OrderDetails", "key": 100, "values": {"total": 5}}]"#)
        #expect(calculated?.code == .readOnlyField)
        #expect(calculated?.description == "OrderDetails.Total: calculated and lookup fields are read-only; their values come from other fields")
    }

    /// A row inserted and deleted again before the apply leaves nothing and crashes nothing:
    /// its insert and update are undone, the delete passes, and `{"ref": …}` works as a key.
    @Test func aNewRowDeletedBeforeTheApplyLeavesNothing() throws {
        let adapter = try makeAdapter()
        let edits = try decode("""
            [{"insert": "Orders", "values": {"ClientId": 1, "Status": "new"}, "as": "order"},
             {"update": "Orders", "key": {"ref": "order.OrderId"}, "values": {"Status": "open"}},
             {"insert": "Orders", "values": {"ClientId": 2, "Status": "kept"}, "as": "kept"},
             {"delete": "Orders", "key": -1},
             {"update": "Orders", "key": {"ref": "order.OrderId"}, "values": {"Status": "late"}}]
            """)
        let orders = try #require(adapter.table(named: "Orders"))
        var run = EditRun(edits: edits, on: adapter.tables)
        run.record(try adapter.applyChanges(for: adapter.tables))
        let verdicts = run.report().verdicts
        #expect(verdicts.map(\.verdict) == [.undone, .undone, .applied, .applied, .refused])
        #expect(verdicts[0].message == "edit 4 deleted this new row before it was stored")
        #expect(verdicts[4].message == "Orders.OrderId: {\"ref\": \"order.OrderId\"} names a row an earlier edit deleted")
        #expect(orders.rows.map { $0["Status"] } == ["open", "open", "kept"], "nothing of the deleted row is stored")
        #expect(run.report().text(schema: "Shop").hasSuffix("2 applied, 2 undone, 1 refused"))
    }
}

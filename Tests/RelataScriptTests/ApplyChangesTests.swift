import Foundation
import Relata
import Testing
@testable import RelataScript

/// `applyChanges`: delta events, transaction events, update rules.
@Suite struct ApplyChangesTests {
    /// A schema script that records every event it sees into `trace`.
    static let tracer = """
        var trace = [];
        function beforeProcessDelta(delta) { trace.push('beforeProcessDelta ' + delta.name + ' ' + delta.count); }
        function beforeProcessDeltaChange(delta, change) { trace.push('beforeChange ' + change.type + ' ' + change.changeId + ' ' + change.status); }
        function afterProcessDeltaChange(delta, change) { trace.push('afterChange ' + change.changeId + ' ' + change.status); }
        function afterProcessDelta(delta) { trace.push('afterProcessDelta ' + delta.name); }
        function beforeCommit() { trace.push('beforeCommit'); }
        function afterCommit() { trace.push('afterCommit'); }
        function afterRollback() { trace.push('afterRollback'); }
        function read() { return trace.join('\\n'); }
        """

    func trace(_ adapter: LocalDataAdapter) throws -> [String] {
        let context = adapter.host.schemaScript!.context
        return try context.value(from: context.call(context.globalFunction(named: "read"), [])).stringValue?
            .split(separator: "\n").map(String.init) ?? []
    }

    @Test func eventsRunInOrderAndChangesCommit() throws {
        let adapter = try makeAdapter(schema: Self.tracer)
        let orders = adapter.table(named: "Orders")!
        try orders.rows[0].setValue("paid", forKey: "Status")
        try orders.addNewRow(values: ["ClientId": 2])
        let delta = try adapter.applyChanges(for: orders)
        #expect(delta.changes.map(\.status) == [.resolved, .resolved])
        #expect(try trace(adapter) == [
            "beforeProcessDelta Orders 2",
            "beforeChange update 1 pending", "afterChange 1 resolved",
            "beforeChange insert 2 pending", "afterChange 2 resolved",
            "afterProcessDelta Orders",
            "beforeCommit", "afterCommit",
        ])
        #expect(!orders.hasChanges)
        #expect(orders.rows[0].originalValue(forKey: "Status") == "paid")
    }

    @Test func aFailedChangeStaysPendingAndTheOthersApply() throws {
        let adapter = try makeAdapter(details: """
            function beforeProcessDeltaChange(delta, change) {
                if (change.isUpdate && change.newValues.Quantity > 10)
                    fail('line ' + change.DetailId + ': at most 10 per line');
            }
            """)
        let details = adapter.table(named: "OrderDetails")!
        try details.rows[0].setValue(50, forKey: "Quantity")
        try details.rows[1].setValue(3, forKey: "Quantity")
        let delta = try adapter.applyChanges(for: details)
        #expect(delta.changes.map(\.status) == [.failed, .resolved])
        #expect(delta.changes[0].message == "line 100: at most 10 per line")
        #expect(details.rows[0].rowState == .modified)
        #expect(details.rows[0]["Quantity"] == 50, "nothing typed is lost")
        #expect(details.rows[0].failureMessage == "line 100: at most 10 per line")
        #expect(!details.rows[0].isLocked)
        #expect(details.rows[1].rowState == .unchanged)
    }

    @Test func deltaWideFailuresFailEveryChange() throws {
        let adapter = try makeAdapter(orders: "function beforeProcessDelta(delta) { if (delta.count > 1) fail('one order at a time'); }")
        let orders = adapter.table(named: "Orders")!
        try orders.rows[0].setValue("a", forKey: "Status")
        try orders.rows[1].setValue("b", forKey: "Status")
        let delta = try adapter.applyChanges(for: orders)
        #expect(delta.changes.allSatisfy { $0.status == .failed && $0.message == "one order at a time" })
        #expect(orders.changedRows.count == 2)
    }

    @Test func runtimeErrorsInDeltaEventsFailTheChangeWithTheirLocation() throws {
        let adapter = try makeAdapter(orders: "function afterProcessDeltaChange(delta, change) {\n  change.oops.boom;\n}")
        let orders = adapter.table(named: "Orders")!
        try orders.rows[0].setValue("a", forKey: "Status")
        let delta = try adapter.applyChanges(for: orders)
        #expect(delta.changes[0].status == .failed)
        #expect(delta.changes[0].message?.hasPrefix("Orders.js:2:") == true)
        #expect(delta.changes[0].message?.contains("afterProcessDeltaChange") == true)
    }

    @Test func rollbackAllUpdateRule() throws {
        let adapter = try makeAdapter(details: "function beforeProcessDeltaChange(d, c) { if (c.newValues.Quantity === 0) fail('zero'); }",
                                      schema: Self.tracer)
        adapter.setUpdateRule(UpdateRule(onFailure: .rollbackAll), forTable: "OrderDetails")
        let orders = adapter.table(named: "Orders")!, details = adapter.table(named: "OrderDetails")!
        try orders.rows[0].setValue("paid", forKey: "Status")
        try details.rows[0].setValue(0, forKey: "Quantity")
        try details.rows[1].setValue(7, forKey: "Quantity")
        let deltas = try adapter.applyChanges(for: [details, orders])
        #expect(deltas.flatMap(\.changes).allSatisfy { $0.status == .failed })
        #expect(deltas.flatMap(\.changes).filter { $0.message?.hasPrefix("not applied: the apply was rolled back") == true }.count == 2)
        #expect(orders.rows[0].rowState == .modified)
        #expect(details.rows[1].rowState == .modified)
        #expect(try trace(adapter).suffix(1) == ["afterRollback"])
        #expect(!(try trace(adapter)).contains("beforeCommit"))
    }

    @Test func beforeCommitCanRollEverythingBack() throws {
        let adapter = try makeAdapter(orders: "function beforeCommit() { fail('the books are closed'); }\nvar rolledBack = false;\nfunction afterRollback() { rolledBack = true; }")
        let orders = adapter.table(named: "Orders")!
        try orders.rows[0].setValue("paid", forKey: "Status")
        let delta = try adapter.applyChanges(for: orders)
        #expect(delta.changes[0].status == .failed)
        #expect(delta.changes[0].message?.contains("the books are closed") == true)
        #expect(orders.rows[0].rowState == .modified)
        let context = adapter.host.script(forTable: "Orders")!.context
        #expect(try context.value(from: context.property("rolledBack", of: context.global)) == true)
    }

    @Test func updateOrderDecidesTheSequence() throws {
        let adapter = try makeAdapter(schema: Self.tracer)
        adapter.updateOrder = ["OrderDetails", "Orders"]
        try adapter.table(named: "Orders")!.rows[0].setValue("x", forKey: "Status")
        try adapter.table(named: "OrderDetails")!.rows[0].setValue(9, forKey: "Quantity")
        let deltas = try adapter.applyChanges(for: [adapter.table(named: "Orders")!, adapter.table(named: "OrderDetails")!])
        #expect(deltas.map(\.tableName) == ["OrderDetails", "Orders"])
        #expect(try trace(adapter).filter { $0.hasPrefix("beforeProcessDelta") } == ["beforeProcessDelta OrderDetails 1", "beforeProcessDelta Orders 1"])
    }

    @Test func changesMadeThroughLdaJoinTheApply() throws {
        let adapter = try makeAdapter(orders: """
            function afterProcessDeltaChange(delta, change) {
                lda.insert('Clients', { ClientId: 100 + change.OrderId, Name: 'Log ' + change.OrderId });
            }
            """)
        let orders = adapter.table(named: "Orders")!, clients = adapter.table(named: "Clients")!
        try orders.rows[0].setValue("paid", forKey: "Status")
        try clients.rows[1].setValue("Globex Corp", forKey: "Name")
        let deltas = try adapter.applyChanges(for: [orders])
        #expect(deltas.map(\.tableName) == ["Orders", "Clients"])
        #expect(deltas[1].changes.count == 1, "only the change the rule made, not the user's pending edit of Globex")
        #expect(try clients.row(forPrimaryKey: 110)?.rowState == .unchanged)
        #expect(clients.rows[1].rowState == .modified)
    }

    @Test func validatingAnApplyGivesItsVerdictsAndChangesNothing() throws {
        let adapter = try makeAdapter(orders: """
            function beforeProcessDeltaChange(delta, change) {
                if (change.newValues.Status == 'void') fail('order ' + change.OrderId + ' cannot be voided');
            }
            function afterProcessDeltaChange(delta, change) {
                lda.insert('Clients', { ClientId: 100 + change.OrderId, Name: 'Log ' + change.OrderId });
            }
            """)
        let orders = adapter.table(named: "Orders")!, clients = adapter.table(named: "Clients")!
        try orders.rows[0].setValue("void", forKey: "Status")
        try orders.rows[1].setValue("paid", forKey: "Status")
        let clientCount = clients.rows.count

        let verdicts = try adapter.validateApply(for: [orders])
        #expect(verdicts.map(\.tableName) == ["Orders", "Clients"])
        #expect(verdicts[0].changes.map(\.status) == [.failed, .resolved])
        #expect(verdicts[0].changes[0].message == "order 10 cannot be voided")
        #expect(verdicts[0].changes[0].failure?.location?.hasPrefix("Orders.js:2") == true)
        #expect(orders.rows.map(\.rowState) == [.modified, .modified], "nothing is applied")
        #expect(orders.rows.allSatisfy { !$0.isLocked && $0.failureMessage == nil })
        #expect(orders.rows[0]["Status"] == "void", "nothing typed is lost")
        #expect(clients.rows.count == clientCount, "what rules wrote through lda is cancelled")
        #expect(!adapter.isApplying)

        let applied = try adapter.applyChanges(for: [orders])
        #expect(applied[0].changes.map(\.status) == verdicts[0].changes.map(\.status), "the apply agrees with its validation")
        #expect(applied[0].changes[0].message == verdicts[0].changes[0].message)
    }

    @Test func applyRejectsTablesItDoesNotHold() throws {
        let adapter = try makeAdapter()
        let stranger = try DataTable(name: "Stranger", fields: clientFields)
        #expect(throws: RelataError.self) { try adapter.applyChanges(for: stranger) }
    }

    @Test func dataEvents() throws {
        let adapter = try makeAdapter(schema: """
            var seen = [];
            function beforeGetData(names, requests) {
                if (names.includes('Clients') && !session.hasRole('Admin')) fail('only admins read clients');
                seen.push(names.join(',') + ' ' + (requests[0].where || ''));
            }
            function afterGetData(names, requests) { seen.push('after ' + names.join(',')); }
            function read() { return seen.join('|'); }
            """)
        let rows = try adapter.fetchRows(from: "Orders", where: "ClientId = :c", parameters: ["c": 1])
        #expect(rows.count == 1)
        #expect(scriptError { _ = try adapter.fetchTable("Clients") }?.message == "only admins read clients")
        adapter.session = Session(roles: ["Admin"])
        #expect(try adapter.fetchTables(["Clients", "Orders"]).count == 2)
        let context = adapter.host.schemaScript!.context
        #expect(try context.value(from: context.call(context.globalFunction(named: "read"), [])) ==
                "Orders ClientId = :c|after Orders|Clients,Orders |after Clients,Orders")
    }
}

@Suite struct ScriptCalculatedFieldTests {
    @Test func calculatedFieldFromAFunctionExpressionOrAName() throws {
        let adapter = try makeAdapter(details: "function lineTotal(row) { return row.Quantity * row.UnitPrice; }")
        try adapter.addCalculatedField(name: "Total", type: .currency, cached: true, table: "OrderDetails", function: "lineTotal")
        try adapter.addCalculatedField(name: "Label", type: .string, table: "OrderDetails",
                                       function: "function (row) { return row.Product + ' x' + row.Quantity }")
        let row = adapter.table(named: "OrderDetails")!.rows[0]
        #expect(row["Total"] == .decimal(Decimal(string: "19.98")!))
        #expect(row["Label"] == "Widget x2")
        try row.setValue(3, forKey: "Quantity")
        #expect(row["Total"] == .decimal(Decimal(string: "29.97")!))
        #expect(try adapter.table(named: "OrderDetails")!.rows(where: "Total > 29").count == 2)
    }

    @Test func calculationErrors() throws {
        let adapter = try makeAdapter(details: "function broken(row) { return row.Nope; }")
        try adapter.addCalculatedField(name: "Bad", type: .integer, table: "OrderDetails", function: "broken")
        let error = relataOrScriptError { _ = try adapter.table(named: "OrderDetails")!.rows[0].value(forKey: "Bad") }
        #expect(error?.contains("no field 'Nope'") == true)
        #expect(error?.contains("OrderDetails.js:1") == true)
        #expect(throws: ScriptError.self) { try adapter.addCalculatedField(name: "X", type: .integer, table: "OrderDetails", function: "missing") }
        #expect(throws: ScriptError.self) { try adapter.addCalculatedField(name: "Y", type: .integer, table: "OrderDetails", function: "function (row) { return ") }
    }

    @Test func lookupFieldsAreReadableFromScripts() throws {
        let direct = try makeAdapter(details: "function beforePost(row) { if (row.OrderStatus === 'closed') fail('the order is closed'); }")
        let lines = direct.table(named: "OrderDetails")!
        try lines.addLookupField(name: "OrderStatus", sourceField: "OrderId", lookupTable: direct.table(named: "Orders")!,
                                 lookupKeyField: "OrderId", lookupResultField: "Status")
        try direct.table(named: "Orders")!.rows[0].setValue("closed", forKey: "Status")
        #expect(scriptError { try lines.rows[0].setValue(1, forKey: "Quantity") }?.message == "the order is closed")
        try lines.rows[2].setValue(1, forKey: "Quantity")
    }

    func relataOrScriptError(_ body: () throws -> Void) -> String? {
        do { try body() } catch { return "\(error)" }
        return nil
    }
}

import Foundation
import Relata
import Testing
@testable import RelataScript

@Suite struct RowEventTests {
    @Test func beforePostFailureCarriesMessageAndLocationAndChangesNothing() throws {
        let adapter = try makeAdapter(details: """
            function beforePost(row) {
                if (row.Quantity <= 0)
                    fail('Quantity must be positive, got ' + row.Quantity);
            }
            """)
        let details = adapter.table(named: "OrderDetails")!
        let row = details.rows[0]
        let error = scriptError { try row.setValue(0, forKey: "Quantity") }
        #expect(error?.kind == .ruleFailed)
        #expect(error?.message == "Quantity must be positive, got 0")
        #expect(error?.file == "OrderDetails.js")
        #expect(error?.line == 3)
        #expect(error?.column != nil)
        #expect(error?.event == "beforePost")
        #expect(error?.table == "OrderDetails")
        #expect(error?.row == "row (DetailId=100)")
        #expect(row["Quantity"] == 2)
        #expect(row.rowState == .unchanged)
        try row.setValue(3, forKey: "Quantity")
        #expect(row.rowState == .modified)
    }

    @Test func onNewRowSetsDefaultsAndBeforeInsertChecksTheRow() throws {
        let adapter = try makeAdapter(details: """
            function onNewRow(row) { row.Quantity = 1; row['Product'] = 'Unnamed'; }
            function beforeInsert(row) { if (row.OrderId == null) fail('a line needs an order'); }
            """)
        let details = adapter.table(named: "OrderDetails")!
        let row = try details.addNewRow(values: ["OrderId": 10])
        #expect(row["Quantity"] == 1)
        #expect(row["Product"] == "Unnamed")
        #expect(row.rowState == .added)
        let named = try details.addNewRow(values: ["OrderId": 10, "Product": "Sprocket"])
        #expect(named["Product"] == "Sprocket", "given values are written over what onNewRow set")
        #expect(named["Quantity"] == 1)
        let error = scriptError { try details.addNewRow() }
        #expect(error?.message == "a line needs an order")
        #expect(error?.event == "beforeInsert")
        #expect(details.rowCount == 5, "the rejected row was not added")

        let editing = try details.addNewRow(values: [:], inEditMode: true)
        #expect(editing["Quantity"] == 1, "onNewRow ran at add")
        #expect(scriptError { try editing.post() }?.event == "beforeInsert")
        #expect(editing.isInEditMode)
        try editing.setValue(11, forKey: "OrderId")
        try editing.post()
        #expect(details.rowCount == 6)
    }

    @Test func beforeUpdateSeesTheOriginalValues() throws {
        let adapter = try makeAdapter(details: """
            function beforeUpdate(row, old) {
                if (row.UnitPrice < old.UnitPrice / 2) fail('price cut from ' + old.UnitPrice + ' to ' + row.UnitPrice + ' is too steep');
            }
            """)
        let row = adapter.table(named: "OrderDetails")!.rows[1]
        try row.setValue(20, forKey: "UnitPrice")
        let error = scriptError { try row.setValue(10, forKey: "UnitPrice") }
        #expect(error?.message == "price cut from 24.5 to 10 is too steep")
        #expect(row["UnitPrice"] == .decimal(20))
    }

    @Test func oldIsAReadOnlyObjectOfTheStoredFields() throws {
        let adapter = try makeAdapter(details: """
            var kept;
            function beforeUpdate(row, old) {
                if (kept) fail('kept ' + kept.UnitPrice + ' ' + kept.note);
                kept = old;
                let seen = [Object.keys(old).join(','), JSON.stringify(old), 'UnitPrice' in old, 'Nope' in old,
                            old.Nope, old.hasOwnProperty('Quantity')].join(' | ');
                try { old.UnitPrice = 1; seen += ' | wrote'; } catch (e) { seen += ' | ' + e.message; }
                delete old.UnitPrice;
                old.note = 'mine';
                fail(seen + ' | ' + old.note + ' | ' + old.UnitPrice);
            }
            """)
        let details = adapter.table(named: "OrderDetails")!
        let first = scriptError { try details.rows[1].setValue(20, forKey: "UnitPrice") }
        #expect(first?.message == "DetailId,OrderId,Product,Quantity,UnitPrice"
            + " | {\"DetailId\":101,\"OrderId\":10,\"Product\":\"Gadget\",\"Quantity\":1,\"UnitPrice\":24.5}"
            + " | true | false |  | true | old values are read-only | mine | 24.5")
        let second = scriptError { try details.rows[1].setValue(30, forKey: "Quantity") }
        #expect(second?.message == "kept 24.5 mine", "an old kept from an earlier call still reads")

        // A script loaded anew is the one that runs: handlers are not kept across loads.
        try adapter.setScript(RuleScript("function beforeUpdate(row, old) { fail('new rules'); }", fileName: "OrderDetails.js"), forTable: "OrderDetails")
        #expect(scriptError { try details.rows[1].setValue(31, forKey: "Quantity") }?.message == "new rules")
    }

    @Test func rowAndOldHaveObjectPrototypeAsTheirPrototype() throws {
        let adapter = try makeAdapter(details: """
            function beforeUpdate(row, old) {
                fail([Object.getPrototypeOf(row) === Object.prototype, Object.getPrototypeOf(old) === Object.prototype,
                      row instanceof Object, typeof row.hasOwnProperty].join(' '));
            }
            """)
        let error = scriptError { try adapter.table(named: "OrderDetails")!.rows[1].setValue(20, forKey: "UnitPrice") }
        #expect(error?.message == "true true true function")
    }

    @Test func editModeRunsRulesAtPost() throws {
        let adapter = try makeAdapter(details: "function beforePost(row) { if (row.Quantity > 100) fail('too many'); }")
        let row = adapter.table(named: "OrderDetails")!.rows[0]
        try row.edit()
        try row.setValue(500, forKey: "Quantity")
        #expect(scriptError { try row.post() }?.message == "too many")
        #expect(row.isInEditMode)
        #expect(row["Quantity"] == 500, "what the user typed is kept in the editor")
        try row.discard()
        #expect(row["Quantity"] == 2)
    }

    @Test func beforeDeleteCanRefuse() throws {
        let adapter = try makeAdapter(orders: "function beforeDelete(row) { if (row.Status === 'open') fail('open orders stay'); }")
        let orders = adapter.table(named: "Orders")!
        #expect(scriptError { try orders.removeRow(orders.rows[0]) }?.message == "open orders stay")
        #expect(orders.rowCount == 2)
        try orders.rows[0].setValue("closed", forKey: "Status")
        try orders.removeRow(orders.rows[0])
        #expect(orders.deletedRows.count == 1)
    }

    @Test func rulesMaySetOtherFieldsDuringPost() throws {
        let adapter = try makeAdapter(orders: "function beforePost(row) { if (row.Status === 'OPEN') row.Status = 'open'; }")
        let order = adapter.table(named: "Orders")!.rows[1]
        try order.setValue("OPEN", forKey: "Status")
        #expect(order["Status"] == "open")
        #expect(order.rowState == .unchanged, "normalised back to the original value")
    }

    @Test func javascriptWritesAreValidatedLikeSwiftWrites() throws {
        let adapter = try makeAdapter(orders: """
            function beforePost(row) {
                if (row.Status === 'typo') row.Statsu = 'x';
                if (row.Status === 'long') row.Status = 'far too long a status';
                if (row.Status === 'type') row.ClientId = 'one';
                if (row.Status === 'read') return row.Nope;
            }
            """)
        let order = adapter.table(named: "Orders")!.rows[0]
        let unknown = scriptError { try order.setValue("typo", forKey: "Status") }
        #expect(unknown?.message.contains("no field 'Statsu'") == true)
        #expect(unknown?.file == "Orders.js")
        #expect(unknown?.line == 2)
        let long = scriptError { try order.setValue("long", forKey: "Status") }
        #expect(long?.message.contains("Orders.Status") == true)
        #expect(long?.message.contains("allows 10") == true)
        #expect(long?.line == 3)
        let type = scriptError { try order.setValue("type", forKey: "Status") }
        #expect(type?.message.contains("not a valid integer") == true)
        #expect(scriptError { try order.setValue("read", forKey: "Status") }?.message.contains("no field 'Nope'") == true)
        #expect(order["Status"] == "open")
        #expect(order.rowState == .unchanged)
    }

    @Test func rowObjectsBehaveLikeObjects() throws {
        let adapter = try makeAdapter(orders: """
            var seen = null;
            function beforePost(row) { seen = JSON.stringify(row) + '|' + Object.keys(row).join(',') + '|' + ('Status' in row) + '|' + String(row.OrderId) + '|' + row.hasOwnProperty('Status'); }
            function lastSeen() { return seen; }
            """)
        try adapter.table(named: "Orders")!.rows[0].setValue("paid", forKey: "Status")
        let context = adapter.host.script(forTable: "Orders")!.context
        let seen = try context.value(from: context.call(context.globalFunction(named: "lastSeen"), []))
        #expect(seen == #"{"OrderId":10,"ClientId":1,"Status":"paid"}|OrderId,ClientId,Status|true|10|true"#)
    }

    @Test func schemaWideHandlersRunAfterTheTablesOwn() throws {
        let adapter = try makeAdapter(orders: "function beforePost(row) { row.Status = row.Status + '+table'; }",
                                      schema: "function beforePost(row) { if (row.Status.endsWith('+table')) row.Status = 'ok'; }")
        let order = adapter.table(named: "Orders")!.rows[0]
        try order.setValue("x", forKey: "Status")
        #expect(order["Status"] == "ok")
        let client = adapter.table(named: "Clients")!.rows[0]
        #expect(scriptError { try client.setValue("Acme 2", forKey: "Name") }?.file == "schema.js", "schema-wide rules apply to every table")
    }

    /// Server-only scripts run after the shared script of the same place: a table's own scripts,
    /// then the schema-wide ones — in row events, in a batch validation and in the apply's events.
    @Test func serverScriptsRunAfterTheSharedScriptOfTheirPlace() throws {
        let adapter = try makeAdapter(orders: "function beforePost(row) { row.Status = row.Status + 'a'; }",
                                      schema: "function beforePost(row) { row.Status = row.Status + 'c'; }")
        try adapter.setServerScript(RuleScript("""
            function beforePost(row) { row.Status = row.Status + 'b'; }
            function beforeProcessDeltaChange(delta, change) { if (change.Status.endsWith('d')) fail('seen by the server script'); }
            """, fileName: "Orders.server.js"), forTable: "Orders")
        try adapter.setServerScript(RuleScript("function beforePost(row) { if (row.Status !== undefined) row.Status = row.Status + 'd'; }",
                                               fileName: "schema.server.js"), forTable: nil)
        let order = adapter.table(named: "Orders")!.rows[0]
        try order.setValue("x", forKey: "Status")
        #expect(order["Status"] == "xabcd", "table, its server script, schema, its server script")
        let delta = try adapter.applyChanges(for: adapter.table(named: "Orders")!)
        #expect(delta.changes.first?.message == "seen by the server script")
        #expect(delta.changes.first?.failure?.location?.hasPrefix("Orders.server.js:2:") == true, "\(delta.changes.first?.failure?.location ?? "")")
        #expect(throws: RelataError.self) { try adapter.setServerScript(RuleScript("", fileName: "x.js"), forTable: "Nope") }
    }

    @Test func scriptsAreCompiledWhenLoaded() throws {
        let adapter = try makeAdapter()
        let error = scriptError { try adapter.setScript(RuleScript("function beforePost(row) {\n  if (row.Quantity < 0 {\n}", fileName: "bad.js"), forTable: "OrderDetails") }
        #expect(error?.kind == .syntax)
        #expect(error?.file == "bad.js")
        #expect(error?.line == 2)
        #expect(throws: RelataError.self) { try adapter.setScript(RuleScript("", fileName: "x.js"), forTable: "Nope") }
    }

    @Test func aRunawayRuleIsStoppedAndTheAdapterStaysUsable() throws {
        let adapter = try makeAdapter(orders: "function beforePost(row) { if (row.Status === 'spin') while (true) {} }")
        let order = adapter.table(named: "Orders")!.rows[0]
        let error = scriptError { try order.setValue("spin", forKey: "Status") }
        #expect(error?.kind == .timeLimitExceeded)
        #expect(error?.event == "beforePost")
        #expect(order["Status"] == "open")
        try order.setValue("paid", forKey: "Status")
        #expect(order["Status"] == "paid")
    }

    @Test func thousandsOfRowsThroughRules() throws {
        let adapter = try makeAdapter(details: """
            function beforePost(row) { if (row.Quantity < 0) fail('negative'); }
            function beforeInsert(row) { if (row.Product == null) fail('no product'); }
            """)
        let details = adapter.table(named: "OrderDetails")!
        for index in 0..<3000 {
            try details.addNewRow(values: ["OrderId": 10, "Product": .string("P\(index)"), "Quantity": .integer(Int64(index % 7))])
        }
        for row in details.rows.prefix(2000) { try row.setValue(.integer((try row.value(forKey: "Quantity").integerValue ?? 0) + 1), forKey: "Quantity") }
        #expect(details.rowCount == 3003)
        let deltas = try adapter.applyChanges(for: details)
        #expect(deltas.count == 3003, "3000 inserts and the 3 loaded rows updated")
        #expect(!details.hasChanges)
    }
}

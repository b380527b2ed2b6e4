import Foundation
import Relata
import Testing
@testable import RelataScript

/// A row event's `row` and `old` are proxies over values handed over with the call
/// (``RowProxies``); they must behave as the row objects `lda` gives, which read and write the
/// row itself: live, checked, a misspelt name an error — also when the row changes under them.
@Suite(.timeLimit(.minutes(1))) struct RowProxyTests {
    @Test func aRowEventsRowBehavesAsTheRowObjectLdaGivesForTheSameRow() throws {
        let adapter = try makeAdapter(details: """
            function probe(r) {
                const seen = [Object.keys(r).join(','), JSON.stringify(r), String(r), 'Quantity' in r, 'quantity' in r, r.quantity,
                              r.hasOwnProperty('Product'), typeof r.toString, r.toJSON, typeof r.then,
                              Object.getPrototypeOf(r) === Object.prototype];
                const attempts = [() => 'Misspelt' in r, () => r.Misspelt, () => r.hasOwnProperty('Nope'), () => delete r.Quantity, () => { r.Misspelt = 1; },
                                  () => { r.Quantity = 'many'; }, () => { r.Quantity = 2.5; }, () => { r.Product = 7; }];
                for (const attempt of attempts) {
                    try { seen.push('gave ' + String(attempt())); } catch (e) { seen.push(e.message + ' (' + (e.relataKind || 'plain') + ')'); }
                }
                return seen.join(' | ');
            }
            function beforeUpdate(row, old) {
                if (row.Quantity !== 3) return;
                const proxy = probe(row), object = probe(lda.select('OrderDetails', row.DetailId));
                if (proxy !== object) fail('differ:\\n' + proxy + '\\n' + object);
                // Where the two differ, on purpose: a field is described as what it is, writable and listed.
                fail('same: ' + proxy + ' | ' + JSON.stringify(Object.getOwnPropertyDescriptor(row, 'Quantity')));
            }
            """)
        let details = try #require(adapter.table(named: "OrderDetails"))
        let message = try #require(scriptError { try details.rows[0].setValue(3, forKey: "Quantity") }?.message)
        #expect(message.hasPrefix("same: DetailId,OrderId,Product,Quantity,UnitPrice | {\"DetailId\":100,\"OrderId\":10,"), "\(message)")
        #expect(message.contains("[object DataTableRow]"), "\(message)")
        #expect(message.contains("no field 'Misspelt'"), "\(message)")
        #expect(message.contains("fields cannot be deleted"), "\(message)")
        #expect(message.hasSuffix("| {\"value\":3,\"writable\":true,\"enumerable\":true,\"configurable\":true}"), "\(message)")
    }

    @Test func aRowSeesWritesMadeThroughOtherObjectsAndLdaWhileItsHandlerRuns() throws {
        let adapter = try makeAdapter(details: """
            function beforeUpdate(row, old) {
                if (row.Quantity !== 3) return;
                const other = lda.select('OrderDetails', row.DetailId);
                const seen = [row.Product];
                other.Product = 'Renamed';
                seen.push(row.Product);
                row.Product = 'Again';
                seen.push(other.Product, row.Product);
                lda.update('OrderDetails', row, { Product: 'ViaLda', UnitPrice: 3 });
                seen.push(row.Product, row.UnitPrice, old.Product, old.UnitPrice);
                row.UnitPrice = 4.25;
                seen.push(row.UnitPrice);
                fail(seen.join(' '));
            }
            """)
        let details = try #require(adapter.table(named: "OrderDetails"))
        let error = scriptError { try details.rows[0].setValue(3, forKey: "Quantity") }
        #expect(error?.message == "Widget Renamed Again Again ViaLda 3 Widget 9.99 4.25")
        #expect(details.rows[0]["Product"] == "Widget", "the refused change left the row as it was")
    }

    @Test func aRowKeptFromAnEarlierCallReadsTheRowUntilRowsLeaveTheTable() throws {
        let adapter = try makeAdapter(details: """
            var kept = null;
            function beforeUpdate(row, old) {
                if (kept === null) { kept = row; return; }
                fail('kept reads ' + kept.Quantity + ' ' + kept.Product);
            }
            """)
        let details = try #require(adapter.table(named: "OrderDetails"))
        try details.rows[0].setValue(7, forKey: "Quantity")
        #expect(scriptError { try details.rows[0].setValue(8, forKey: "Quantity") }?.message == "kept reads 8 Widget",
                "the kept row reads the value being posted")
        #expect(scriptError { try details.rows[2].setValue(9, forKey: "Quantity") }?.message == "kept reads 7 Widget",
                "and then the value the refused change left")
        try details.removeRow(details.rows[1])
        _ = try adapter.applyChanges(for: details)
        let stale = scriptError { try details.rows[1].setValue(9, forKey: "Quantity") }
        #expect(stale?.message.contains("a row object of table OrderDetails was used after its table's rows changed place") == true,
                "\(String(describing: stale?.message))")
    }

    @Test func oldReadsAFieldItsScriptNeverNamesUntilTheOriginalsAreReplaced() throws {
        // The script names no field but Quantity: `Product` is not handed over, and is read from Swift.
        let adapter = try makeAdapter(details: """
            var keptOld = null;
            const name = ['Pro', 'duct'].join('');
            function beforeUpdate(row, old) {
                if (row.Quantity === 40) { keptOld = old; return; }
                fail(old[name] + ' ' + keptOld[name] + ' ' + JSON.stringify(old));
            }
            """)
        let details = try #require(adapter.table(named: "OrderDetails"))
        try details.rows[0].setValue(40, forKey: "Quantity")
        try details.rows[0].setValue("Sprocket", forKey: "Product")
        #expect(scriptError { try details.rows[2].setValue(9, forKey: "Quantity") }?.message
            == "Widget Widget {\"DetailId\":102,\"OrderId\":11,\"Product\":\"Widget\",\"Quantity\":5,\"UnitPrice\":9.99}")
        _ = try adapter.applyChanges(for: details)   // row 100's originals are now Sprocket, 40
        let stale = scriptError { try details.rows[2].setValue(9, forKey: "Quantity") }
        #expect(stale?.message.contains("old.Product of table OrderDetails: the row's original values were replaced") == true,
                "\(String(describing: stale?.message))")
    }

    @Test func eachHandlerOfAnEventSeesWhatTheOneBeforeItWrote() throws {
        let adapter = try makeAdapter(details: """
            function beforeUpdate(row, old) { if (row.Quantity === 3) row.Product = 'by the table'; }
            """, schema: """
            function beforeUpdate(row, old) { if (row.Quantity === 3) fail(row.Product + ' / ' + old.Product); }
            """)
        let details = try #require(adapter.table(named: "OrderDetails"))
        #expect(scriptError { try details.rows[0].setValue(3, forKey: "Quantity") }?.message == "by the table / Widget")
    }

    @Test func aDateReadFromARowIsTheScriptsOwnCopy() throws {
        let fields = [FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("Due", .dateTime), FieldDefinition("Seen", .string)]
        let adapter = try LocalDataAdapter(engine: ScriptEngine(timeLimit: .milliseconds(300)))
        try adapter.addTable(name: "Tasks", fields: fields, csv: "Id,Due,Seen\n1,2026-01-02T00:00:00Z,\n", script: RuleScript("""
            function beforeUpdate(row, old) {
                if (row.Seen !== null) return;
                row.Due.setUTCFullYear(1999);
                old.Due.setUTCFullYear(1998);
                row.Seen = row.Due.getUTCFullYear() + ' ' + old.Due.getUTCFullYear();
            }
            """, fileName: "Tasks.js"))
        let tasks = try #require(adapter.table(named: "Tasks"))
        try tasks.rows[0].setValue(Date(timeIntervalSince1970: 0), forKey: "Due")
        #expect(tasks.rows[0]["Seen"] == "1970 2026")
    }
}

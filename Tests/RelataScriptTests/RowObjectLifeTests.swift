import Foundation
import Relata
import Testing
@testable import RelataScript

/// A row event's `row` reads and writes the row itself: what another object of the row, `lda`
/// or an earlier handler wrote is what it reads, also when a script kept it from an earlier
/// call — until the row leaves its table, when using it is an error, never a crash.
@Suite(.timeLimit(.minutes(1))) struct RowObjectLifeTests {
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

    @Test func aRowTurnsIntoTextLikeAnyObject() throws {
        let adapter = try makeAdapter(details: """
            function beforeUpdate(row, old) {
                fail([String(row), `${row}`, row + '', Object.prototype.toString.call(row), String(old)].join(' '));
            }
            """)
        let details = try #require(adapter.table(named: "OrderDetails"))
        #expect(scriptError { try details.rows[0].setValue(3, forKey: "Quantity") }?.message
            == "[object DataTableRow] [object DataTableRow] [object DataTableRow] [object DataTableRow] [object OriginalValues]")
    }

    @Test func aRowKeptFromAnEarlierCallReadsItsRowUntilTheRowLeavesTheTable() throws {
        let adapter = try makeAdapter(details: """
            var kept = null;
            function beforeUpdate(row, old) {
                if (kept === null) { kept = row; return; }
                if (row.Quantity === 50) lda.update('OrderDetails', kept, { Quantity: 51 });
                fail('kept reads ' + kept.Quantity + ' ' + kept.Product);
            }
            """)
        let details = try #require(adapter.table(named: "OrderDetails"))
        try details.rows[2].setValue(7, forKey: "Quantity")   // DetailId 102 is kept
        #expect(scriptError { try details.rows[2].setValue(8, forKey: "Quantity") }?.message == "kept reads 8 Widget",
                "the kept row reads the value being posted")
        #expect(scriptError { try details.rows[0].setValue(9, forKey: "Quantity") }?.message == "kept reads 7 Widget",
                "and then the value the refused change left")
        try details.removeRow(details.rows[0])
        _ = try adapter.applyChanges(for: details)   // another row leaves: the kept one moves up
        #expect(scriptError { try details.rows[0].setValue(9, forKey: "Quantity") }?.message == "kept reads 7 Widget")
        try details.removeRow(details.rows[1])
        _ = try adapter.applyChanges(for: details)   // the kept row itself leaves
        let gone = scriptError { try details.rows[0].setValue(9, forKey: "Quantity") }
        #expect(gone?.message.contains("a row object of table OrderDetails was used after its row was removed from the table") == true,
                "\(String(describing: gone?.message))")
        let handed = scriptError { try details.rows[0].setValue(50, forKey: "Quantity") }
        #expect(handed?.message.contains("was used after its row was removed") == true, "lda refuses it too: \(String(describing: handed?.message))")
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

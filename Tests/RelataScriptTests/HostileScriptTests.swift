import Foundation
import Relata
import Testing
@testable import RelataScript

/// A rule script or a rule test file can never crash the host: whatever comes back
/// from JavaScript is checked, and Relata's own helpers are out of the scripts' reach.
@Suite struct HostileScriptTests {
    @Test func aBatchRuleWritingCursorNamesGetsAnErrorNotATrap() throws {
        for write in ["row.i = 1e12", "row.i = -1", "row.get = null", "row.set = 5", "row.c0 = null", "row.__relataRow = 1"] {
            let adapter = try makeAdapter(details: "function beforePost(row) { \(write); }")
            let details = try #require(adapter.table(named: "OrderDetails"))
            try details.withoutRules { try details.rows[0].setValue(7, forKey: "Quantity") }
            let violations = try adapter.validateChanges(for: details)
            #expect(violations.count == 1, "\(write)")
            #expect(violations.first?.error.message.contains("OrderDetails") == true, "\(write): \(violations.first?.error.message ?? "")")
        }
    }

    @Test func aRuleShadowingRelatasNamesCannotBreakAnApply() throws {
        let adapter = try makeAdapter(details: """
            var __relataChange = 1, __relataDescribe = 2, __relataError = 3, __relataJoinFailures = 4, __relataMap = 5, relata = 6;
            function beforeProcessDeltaChange(delta, change) { if (change.Quantity === 99) fail('no 99'); }
            function beforePost(row) { if (row.Quantity === 98) fail('no 98'); }
            """)
        let details = try #require(adapter.table(named: "OrderDetails"))
        try details.rows[0].setValue(99, forKey: "Quantity")
        let delta = try adapter.applyChanges(for: details)
        #expect(delta.failedChanges.map(\.message) == ["no 99"])
        #expect(scriptError { try details.rows[1].setValue(98, forKey: "Quantity") }?.message == "no 98")
        try details.withoutRules { try details.rows[1].setValue(98, forKey: "Quantity") }
        #expect(try adapter.validateChanges(for: details).map(\.error.message) == ["no 98"])
    }

    @Test func globalsRulesRelyOnCannotBeReplaced() throws {
        let adapter = try makeAdapter(details: """
            fail = function () {}; log = null;
            function beforePost(row) { if (row.Quantity < 0) fail('negative'); }
            """)
        let details = try #require(adapter.table(named: "OrderDetails"))
        #expect(scriptError { try details.rows[0].setValue(-1, forKey: "Quantity") }?.message == "negative")
    }

    @Test func thrownValuesThatAreNotErrorsAreShownAsJSON() throws {
        let adapter = try makeAdapter(details: """
            function beforePost(row) {
                if (row.Quantity === 11) throw { code: 42 };
                if (row.Quantity === 12) fail({ a: 1 });
                if (row.Quantity === 13) throw 'plain words';
                if (row.Quantity === 14) throw { get message() { throw new Error('hostile getter') } };
            }
            """)
        let details = try #require(adapter.table(named: "OrderDetails"))
        let thrown = scriptError { try details.rows[0].setValue(11, forKey: "Quantity") }
        #expect(thrown?.message.contains(#"{"code":42}"#) == true, "\(thrown?.message ?? "")")
        #expect(thrown?.kind == .runtime)
        let failed = scriptError { try details.rows[0].setValue(12, forKey: "Quantity") }
        #expect(failed?.message == #"{"a":1}"#)
        #expect(failed?.kind == .ruleFailed)
        #expect(scriptError { try details.rows[0].setValue(13, forKey: "Quantity") }?.message.contains("plain words") == true)
        #expect(scriptError { try details.rows[0].setValue(14, forKey: "Quantity") } != nil)
    }

    @Test func hostileLineNumbersInThrownErrorsAreIgnored() throws {
        let adapter = try makeAdapter(details: """
            function beforePost(row) { const e = new Error('odd'); e.line = 1e300; e.column = NaN; e.stack = ''; throw e; }
            """)
        let details = try #require(adapter.table(named: "OrderDetails"))
        let error = scriptError { try details.rows[0].setValue(1, forKey: "Quantity") }
        #expect(error?.message == "odd")
    }

    @Test func aCalculatedFieldSurvivesItsTablesScriptBeingReplaced() throws {
        let adapter = try makeAdapter(details: "function total(row) { return row.Quantity * 2 }")
        try adapter.addCalculatedField(name: "Double", type: .integer, table: "OrderDetails", function: "total")
        try adapter.addCalculatedField(name: "Triple", type: .integer, table: "OrderDetails",
                                       function: "function (row) { return row.Quantity * 3 }")
        let details = try #require(adapter.table(named: "OrderDetails"))
        #expect(details.rows[0]["Double"] == 4)
        try adapter.setScript(RuleScript("function total(row) { return row.Quantity * 20 }", fileName: "OrderDetails.js"), forTable: "OrderDetails")
        for _ in 0..<3 { adapter.engine.collectGarbage() }
        #expect(details.rows[0]["Double"] == 40, "a named function comes from the current script")
        #expect(details.rows[0]["Triple"] == 6)
        #expect(try details.values(ofField: "Triple") == [6, 3, 15])
        try adapter.setScript(RuleScript("function other() {}", fileName: "OrderDetails.js"), forTable: "OrderDetails")
        adapter.engine.collectGarbage()
        let error = #expect(throws: (any Error).self) { try details.rows[0].value(forKey: "Double") }
        #expect("\(error.map { "\($0)" } ?? "")".contains("names function total, which the table's script does not define"))
    }

    @Test func anAsyncHandlerIsABrokenRuleOnBothPaths() throws {
        let adapter = try makeAdapter(details: "async function beforePost(row) { if (row.Quantity < 0) fail('negative'); }")
        let details = try #require(adapter.table(named: "OrderDetails"))
        let error = scriptError { try details.rows[0].setValue(3, forKey: "Quantity") }
        #expect(error?.kind == .runtime)
        #expect(error?.message == "beforePost returned a promise; rule handlers run synchronously (remove async and await)")
        try details.withoutRules { try details.rows[1].setValue(4, forKey: "Quantity") }
        #expect(try adapter.validateChanges(for: details).map(\.error.message) == [error?.message ?? ""])
    }
}

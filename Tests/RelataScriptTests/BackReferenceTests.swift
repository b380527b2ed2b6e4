import Foundation
import Relata
import Testing
@testable import RelataScript

/// What reaches a runtime or a script context without keeping it alive (``BackReference``).
@Suite struct BackReferenceTests {
    final class Owner {
        private var madeBack: BackReference<Owner>?
        var back: BackReference<Owner> { BackReference.kept(in: &madeBack, to: self) }
        deinit { madeBack?.end() }
    }

    @Test func itReadsTheObjectWhileItLivesAndNilOnceItHasGone() {
        var owner: Owner? = Owner()
        let back = owner!.back
        #expect(back.object === owner, "the object, while it lives")
        #expect(owner!.back === back, "made once")
        weak let gone = owner
        owner = nil
        #expect(gone == nil, "the back reference does not keep the object alive")
        #expect(back.object == nil)
    }

    @Test func aTableWhoseRuntimeHasGoneRefusesTheEditsItsRulesWouldHaveChecked() throws {
        let table = try DataTable(name: "Orders", fields: [FieldDefinition("OrderId", .integer, primaryKey: true), FieldDefinition("Quantity", .integer)],
                                  csv: "OrderId,Quantity\n1,1\n")
        var runtime: RuleRuntime? = try RuleRuntime()
        try runtime!.load(RuleScript("function beforePost(row) { if (row.Quantity < 0) fail('negative'); }", fileName: "Orders.js"), forTable: "Orders")
        runtime!.attachRules(to: [table])
        try table.rows[0].setValue(2, forKey: "Quantity")
        weak let gone = runtime
        runtime = nil
        #expect(gone == nil, "the table does not keep its rules' runtime alive")
        let error = #expect(throws: ScriptError.self) { try table.rows[0].setValue(3, forKey: "Quantity") }
        #expect(error?.message.contains("unloaded with their adapter") == true, "\(String(describing: error))")
        #expect(table.rows[0]["Quantity"] == 2, "the edit no rule could check is not made")
    }
}

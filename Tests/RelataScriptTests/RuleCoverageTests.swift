import Foundation
import Relata
import Testing
@testable import RelataScript

/// Coverage numbers on a known script: which functions ran, which fail() calls were reached.
@Suite struct RuleCoverageTests {
    static let script = """
        function beforePost(row) {
            if (row.Quantity <= 0) fail('the quantity must be positive');
            if (row.Quantity > 100) fail('at most 100');
            check(row);
        }
        function check(row) {
            if (row.Product === 'banned') fail('banned');
        }
        function beforeDelete(row) {
            fail('lines are never deleted');
        }
        function lineTotal(row) { return row.Quantity * row.UnitPrice; }
        """

    /// An adapter following `coverage`, with the script on an OrderDetails table of two rows.
    func makeAdapter(_ coverage: RuleCoverage) throws -> (LocalDataAdapter, DataTable) {
        let adapter = try LocalDataAdapter(engine: ScriptEngine())
        adapter.coverage = coverage
        let details = try adapter.addTable(name: "OrderDetails", fields: detailFields,
                                           csv: "DetailId,OrderId,Product,Quantity,UnitPrice\n1,10,Widget,2,9.99\n2,10,Gadget,3,1.5\n",
                                           script: RuleScript(Self.script, fileName: "OrderDetails.js"))
        return (adapter, details)
    }

    @Test func countsCallsAndReachedFailSites() throws {
        let coverage = RuleCoverage()
        let (adapter, details) = try makeAdapter(coverage)
        try adapter.addCalculatedField(name: "Total", type: .float, table: "OrderDetails", function: "lineTotal")
        _ = try details.rows[0].value(forKey: "Total")
        try details.rows[0].setValue(5, forKey: "Quantity")                                // passes
        #expect(throws: ScriptError.self) { try details.rows[0].setValue(0, forKey: "Quantity") }
        #expect(throws: ScriptError.self) { try details.rows[0].setValue("banned", forKey: "Product") }

        let report = coverage.report()
        let script = try #require(report.scripts.first)
        #expect(script.file == "OrderDetails.js")
        #expect(script.functions.map(\.name) == ["beforePost", "check", "beforeDelete", "lineTotal"])
        #expect(script.functions.map(\.calls) == [3, 2, 0, 1])
        #expect(script.failCalls.map(\.line) == [2, 3, 7, 10])
        #expect(script.failCalls.map(\.hits) == [1, 0, 1, 0])
        #expect(report.text.contains("OrderDetails.js: functions 3/4 ran, fail() calls 2/4 reached"))
        #expect(report.text.contains("never ran: beforeDelete (line 9)"))
        #expect(report.text.contains("never reached: fail at line 3:29, fail at line 10:5"))
    }

    @Test func batchValidationIsCountedToo() throws {
        let coverage = RuleCoverage()
        let (adapter, details) = try makeAdapter(coverage)
        details.withoutRules { for row in details.rows { try? row.setValue(-1, forKey: "Quantity") } }
        #expect(try adapter.validateChanges(for: details).count == 2)
        let script = try #require(coverage.report().scripts.first)
        #expect(script.functions.first { $0.name == "beforePost" }?.calls == 2)
        #expect(script.failCalls.first?.hits == 2)
    }
}

extension RuleCoverageTests {
    /// A refusal names the same line and column as the coverage report's `fail()` site, row by row and in a batch.
    @Test func errorsAndCoverageNameTheSameColumnForOneFailCall() throws {
        let coverage = RuleCoverage()
        let (adapter, details) = try makeAdapter(coverage)
        let sites = coverage.report().scripts.flatMap(\.failCalls).map { "\($0.line):\($0.column)" }
        let rowByRow = scriptError { try details.rows[0].setValue(500, forKey: "Quantity") }
        #expect(sites.contains("\(rowByRow?.line ?? 0):\(rowByRow?.column ?? 0)"), "\(sites) vs \(rowByRow?.location ?? "")")
        #expect(rowByRow?.location == "OrderDetails.js:3:29")
        try details.withoutRules { try details.rows[1].setValue(0, forKey: "Quantity") }
        let batch = try adapter.validateChanges(for: details).first?.error
        #expect(batch?.location == "OrderDetails.js:2:28")
        #expect(sites.contains("2:28"))
    }
}

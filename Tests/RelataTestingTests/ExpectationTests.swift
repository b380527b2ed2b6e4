import Foundation
import Relata
import RelataScript
import RelataTesting
import Testing
import XCTest

let pcTradeSchema = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Examples/PCTrade/PCTrade.schema.json")

/// The expectations record a failure exactly when the rules disagree (Swift Testing).
@Suite struct ExpectationTests {
    @Test func holdingExpectationsRecordNothing() throws {
        let pcTrade = try RuleFixture(schema: pcTradeSchema)
        let error = expectRuleFailure(matching: "a client needs a name") { try pcTrade.insert("Clients", ["ClientName": " "]) }
        #expect(error?.location?.hasPrefix("rules/Clients.js:11:") == true)
        let client = expectRulesPass { try pcTrade.insert("Clients", ["ClientName": "Fine Co"]) }
        if let client { expectValue(client, "CreditLimit", 1000) }
    }

    @Test func aRuleThatPassesFailsExpectRuleFailure() throws {
        let pcTrade = try RuleFixture(schema: pcTradeSchema)
        withKnownIssue {
            expectRuleFailure { try pcTrade.insert("Clients", ["ClientName": "Fine Co"]) }
        } matching: { issue in
            issue.comments.contains { $0.rawValue == "expected a rule failure, but the rules passed" }
        }
    }

    @Test func aFailingRuleFailsExpectRulesPassWithItsLocation() throws {
        let pcTrade = try RuleFixture(schema: pcTradeSchema)
        withKnownIssue {
            expectRulesPass { try pcTrade.update("Clients", key: 1, values: ["ClientDiscount": 0.9]) }
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("'a discount of 90% is outside 0–30%' (rules/Clients.js:13:9, in beforePost") }
        }
    }

    @Test func aWrongValueFailsExpectValue() throws {
        let acme = try RuleFixture(schema: pcTradeSchema).row("Clients", key: 1)
        withKnownIssue {
            expectValue(acme, "ClientName", "Somebody")
        } matching: { issue in
            issue.comments.contains { $0.rawValue == "Clients.ClientName, row (ClientId=1): expected 'Somebody', got 'Acme Ltd'" }
        }
    }
}

/// The same expectations under XCTest.
final class ExpectationXCTests: XCTestCase {
    func testRuleOutcomesUnderXCTest() throws {
        let pcTrade = try RuleFixture(schema: pcTradeSchema)
        let error = expectRuleFailure(matching: "has shipped") { try pcTrade.update("Orders", key: 1, values: ["Status": "open"]) }
        XCTAssertEqual(error?.event, "beforeUpdate")
        XCTAssertNotNil(expectRulesPass { try pcTrade.update("Orders", key: 113, values: ["Status": "confirmed"]) })
    }
}

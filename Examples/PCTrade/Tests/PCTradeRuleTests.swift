import Foundation
import Relata
import RelataTesting
import Testing

/// PCTrade's rules tested from Swift, as an app's own test target would test its rules.
@Suite struct PCTradeRuleTests {
    static let schema = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("PCTrade.schema.json")

    @Test func aLineNeedsAPositiveQuantity() throws {
        let pcTrade = try RuleFixture(schema: Self.schema)
        expectRuleFailure(matching: "at least 1") {
            try pcTrade.insert("OrderDetails", ["OrderId": 113, "ProductId": 2, "Quantity": 0])
        }
    }

    @Test func aLineTotalIsCalculatedAfterTheRules() throws {
        let pcTrade = try RuleFixture(schema: Self.schema, fixtures: [
            "Products": [["ProductId": 9500, "ProductName": "Bench Cable", "ProviderId": 1, "UnitPrice": 10, "Discontinued": false]],
            "Orders": [["OrderId": 9500, "ClientId": 5, "OrderDate": .date(Date(timeIntervalSince1970: 1_780_000_000)), "Status": "open"]],
        ])
        let line = expectRulesPass { try pcTrade.insert("OrderDetails", ["OrderId": 9500, "ProductId": 9500, "Quantity": 4, "Discount": 0.25]) }
        if let line {
            expectValue(line, "UnitPrice", 10)
            expectValue(line, "LineTotal", 30)
            expectValue(line, "ProductName", "Bench Cable")
        }
    }

    @Test func shippedOrdersStayShipped() throws {
        let pcTrade = try RuleFixture(schema: Self.schema)
        let error = expectRuleFailure(matching: "has shipped") { try pcTrade.update("Orders", key: 1, values: ["Status": "open"]) }
        #expect(error?.file == "rules/Orders.js")
        #expect(error?.event == "beforeUpdate")
    }

    @Test func productsAreNeverDeleted() throws {
        let pcTrade = try RuleFixture(schema: Self.schema)
        try pcTrade.delete("Products", key: 5)
        expectRuleFailure(matching: "never deleted") { try pcTrade.apply() }
    }

    /// The README's example, as written there.
    @Test func readmeExample() throws {
        let schemaURL = Self.schema
        let pcTrade = try RuleFixture(schema: schemaURL)
        expectRuleFailure(matching: "has shipped") {
            try pcTrade.update("Orders", key: 1, values: ["Status": "open"])
        }
        if let order = expectRulesPass({ try pcTrade.insert("Orders", ["ClientId": 5]) }) {
            expectValue(order, "ClientName", "Hooli Ltd")
        }
    }

    @Test func theJavaScriptRuleTestsPass() throws {
        let results = try expectRuleTestsPass(schema: Self.schema)
        #expect(results.count == 30)
    }
}

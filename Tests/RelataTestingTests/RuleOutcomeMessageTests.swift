import Relata
import RelataScript
import RelataTesting
import Testing

/// The failure texts RelataTesting records show the rule's message and script location.
@Suite struct RuleOutcomeMessageTests {
    let failure = ScriptError(.ruleFailed, "the quantity must be at least 1", file: "rules/OrderDetails.js", line: 15, column: 9,
                              event: "beforePost", table: "OrderDetails", row: "row (DetailId=-1)")

    @Test func anUnexpectedRuleFailureShowsMessageAndLocation() {
        #expect(RuleOutcomeMessage.expectedPass(got: failure)
                == "expected the rules to pass, got the rule failure 'the quantity must be at least 1' (rules/OrderDetails.js:15:9, in beforePost, OrderDetails, row (DetailId=-1))")
    }

    @Test func aFailureWithTheWrongMessage() {
        #expect(RuleOutcomeMessage.expectedFailure(matching: "credit limit", got: failure)
                .hasPrefix("expected a rule failure containing 'credit limit', got the rule failure 'the quantity must be at least 1' (rules/OrderDetails.js:15:9"))
        #expect(RuleOutcomeMessage.expectedFailure(matching: nil, got: nil) == "expected a rule failure, but the rules passed")
    }

    @Test func otherErrorsDescribeThemselves() {
        let error = RelataError(.typeMismatch, "'x' is not a valid integer value", table: "OrderDetails", field: "Quantity")
        #expect(RuleOutcomeMessage.expectedPass(got: error)
                == "expected the rules to pass, got the error: OrderDetails.Quantity: 'x' is not a valid integer value")
    }
}

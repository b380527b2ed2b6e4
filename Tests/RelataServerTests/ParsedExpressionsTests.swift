import Relata
@testable import RelataServer
import Testing

/// Reads' where expressions are parsed once per text, within bounds a client cannot stretch.
@Suite struct ParsedExpressionsTests {
    @Test func aTextIsParsedOnceAndGivesTheSameExpression() throws {
        let expressions = ParsedExpressions()
        let first = try expressions.parse("ClientId = :id")
        let again = try expressions.parse("ClientId = :id")
        let parsed = try Relata.Expression("ClientId = :id")
        #expect(first == again && first == parsed)
        #expect(expressions.count == 1)
        let other = try expressions.parse("ClientId > :id")
        #expect(other != first, "another text is another expression")
        #expect(expressions.count == 2)
    }

    @Test func aTextThatDoesNotParseIsRefusedEveryTimeAndNeverKept() throws {
        let expressions = ParsedExpressions()
        for _ in 0..<2 {
            #expect { try expressions.parse("ClientId = = 1") } throws: { ($0 as? RelataError)?.code == .expressionSyntax }
        }
        #expect(expressions.count == 0)
    }

    @Test func theCacheStaysWithinItsBoundsWhateverClientsSend() throws {
        let expressions = ParsedExpressions(capacity: 8)
        for value in 0..<50 { _ = try expressions.parse("ClientId = \(value)") }
        #expect(expressions.count <= 8)
        let last = try expressions.parse("ClientId = 49")
        #expect(last == (try Relata.Expression("ClientId = 49")))
        let long = "ClientId IN (" + (0..<400).map(String.init).joined(separator: ", ") + ")"
        #expect(long.utf8.count > ParsedExpressions.maxTextBytes)
        let before = expressions.count
        let parsedLong = try expressions.parse(long)
        #expect(parsedLong == (try Relata.Expression(long)))
        #expect(expressions.count == before, "a text longer than the bound is parsed, not kept")
    }
}

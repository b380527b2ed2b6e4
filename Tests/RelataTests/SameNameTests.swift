import Foundation
import Testing
@testable import Relata

/// Names are looked up byte by byte when they are ASCII: the answers must be Foundation's.
@Suite struct SameNameTests {
    static let names = [
        "", "a", "A", "Orders", "ORDERS", "orders", "Order", "OrderDetails", "orderdetails", "Order_Details",
        "@", "`", "[", "{", "Z", "z", "Id1", "ID1", "straße", "STRASSE", "Straße", "ÉCOLE", "école", "ecole",
        "İstanbul", "istanbul", "ǅ", "ǆ", "Ǆ", "ﬁle", "FILE", "😀", "😀x", "a\u{0}b", "A\u{0}B",
    ]

    @Test func everyPairIsAnsweredAsFoundationAnswersIt() {
        for left in Self.names {
            for right in Self.names {
                let expected = left.caseInsensitiveCompare(right) == .orderedSame
                #expect(left.equalsIgnoringCase(right) == expected, "\(left) vs \(right)")
                #expect(left.dropFirst(0).equalsIgnoringCase(right[...]) == expected, "substrings \(left) vs \(right)")
            }
        }
    }
}

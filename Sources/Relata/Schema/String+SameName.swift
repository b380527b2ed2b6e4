import Foundation

extension StringProtocol {
    /// True when two names are the same but for case — as `caseInsensitiveCompare(_:) == .orderedSame`,
    /// which every lookup of a table or field by name means. Names of ASCII letters, digits and
    /// signs (nearly all) are compared byte by byte; others go to Foundation, which is far slower
    /// (a request looks names up dozens of times).
    ///
    /// ```swift
    /// "OrderDetails".equalsIgnoringCase("orderdetails")   // true
    /// "Straße".equalsIgnoringCase("STRASSE")              // as Foundation says
    /// ```
    package func equalsIgnoringCase<Other: StringProtocol>(_ other: Other) -> Bool {
        let answer: Bool?? = utf8.withContiguousStorageIfAvailable { left in
            other.utf8.withContiguousStorageIfAvailable { right in Self.asciiEqualIgnoringCase(left, right) } ?? nil
        }
        if let known = answer ?? nil { return known }
        return caseInsensitiveCompare(other) == .orderedSame
    }

    /// The answer for ASCII bytes, or nil when either side has a byte beyond ASCII.
    private static func asciiEqualIgnoringCase(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool? {
        guard left.count == right.count else {
            // Lengths differ: unequal, unless Unicode folding could make them equal ("ß", "SS").
            return left.allSatisfy { $0 < 0x80 } && right.allSatisfy { $0 < 0x80 } ? false : nil
        }
        var equal = true
        for index in 0..<left.count {
            let a = left[index], b = right[index]
            if a >= 0x80 || b >= 0x80 { return nil }
            if a != b && lowercased(a) != lowercased(b) { equal = false }
        }
        return equal
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }
}

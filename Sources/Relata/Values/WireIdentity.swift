import Foundation

/// Sameness as the wire forms see it — stricter than `==`: the same case and payload, numbers
/// bit for bit (`0.0` and `-0.0` differ), decimals by their text as well, strings and field
/// names by their code points. Two values it calls the same are written identically by
/// ``DeltaBinary`` and ``DeltaJSON``, so one can stand for the other in what is sent or kept.
///
/// ```swift
/// WireIdentity.same(.double(0), .double(-0.0))   // false, though `==` says equal
/// ```
package enum WireIdentity {
    package static func same(_ a: Value, _ b: Value) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case let (.integer(x), .integer(y)): x == y
        case let (.double(x), .double(y)): x.bitPattern == y.bitPattern
        case let (.decimal(x), .decimal(y)): x == y && x.description == y.description
        case let (.boolean(x), .boolean(y)): x == y
        case let (.string(x), .string(y)): Value.sameCodePoints(x, y)
        case let (.date(x), .date(y)): x.timeIntervalSinceReferenceDate.bitPattern == y.timeIntervalSinceReferenceDate.bitPattern
        case let (.guid(x), .guid(y)): x == y
        case let (.blob(x), .blob(y)): x == y
        default: false
        }
    }

    /// The same names (code point for code point) with the same values; values that are one
    /// storage (one a copy of the other, neither changed since, as a server's replay shares the
    /// request's: ``DataTable/makeDelta(sharingValuesWith:)``) at once.
    package static func same(_ a: FieldValues, _ b: FieldValues) -> Bool {
        a.isSameStorage(as: b) || a.allValues(matching: b, same, sameName: Value.sameCodePoints)
    }

    /// Both absent, or the same edits in the same order.
    package static func same(_ a: [RowEdit]?, _ b: [RowEdit]?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        return a.count == b.count && a.indices.allSatisfy { a[$0].sequence == b[$0].sequence && a[$0].kind == b[$0].kind && same(a[$0].values, b[$0].values) }
    }
}

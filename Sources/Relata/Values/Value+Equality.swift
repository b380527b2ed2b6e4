import Foundation

/// Strings are equal when their Unicode code points are — byte for byte in UTF-8, as SQLite's
/// BINARY collation and PostgreSQL's `COLLATE "C"` compare them — not by Swift's canonical
/// equivalence, which would make `"é"` (one code point) equal `"e\u{301}"` (two) in memory
/// and different in every database. Keys, groups, `DISTINCT` and joins all go by this.
///
/// ```swift
/// Value.string("é") == .string("e\u{301}")   // false
/// ```
extension Value {
    public static func == (lhs: Value, rhs: Value) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case let (.integer(a), .integer(b)): return a == b
        case let (.double(a), .double(b)): return a == b
        case let (.decimal(a), .decimal(b)): return a == b
        case let (.boolean(a), .boolean(b)): return a == b
        case let (.string(a), .string(b)): return sameCodePoints(a, b)
        case let (.date(a), .date(b)): return a == b
        case let (.guid(a), .guid(b)): return a == b
        case let (.blob(a), .blob(b)): return a == b
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0 as UInt8)
        case .integer(let value): hasher.combine(1 as UInt8); hasher.combine(value)
        case .double(let value): hasher.combine(2 as UInt8); hasher.combine(value)
        case .decimal(let value): hasher.combine(3 as UInt8); hasher.combine(value)
        case .boolean(let value): hasher.combine(4 as UInt8); hasher.combine(value)
        case .string(let value):
            hasher.combine(5 as UInt8)
            var text = value
            text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
            hasher.combine(text.utf8.count)
        case .date(let value): hasher.combine(6 as UInt8); hasher.combine(value)
        case .guid(let value): hasher.combine(7 as UInt8); hasher.combine(value)
        case .blob(let value): hasher.combine(8 as UInt8); hasher.combine(value)
        }
    }

    /// Whether two strings hold the same code points.
    static func sameCodePoints(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        guard a.utf8.count == b.utf8.count else { return false }
        return a.withUTF8 { x in b.withUTF8 { y in x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 } }
    }
}

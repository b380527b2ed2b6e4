import Foundation

/// The truth value of SQL's three-valued logic.
enum Truth: UInt8 {
    case no, yes, unknown

    init(_ bool: Bool) { self = bool ? .yes : .no }

    var value: Value { self == .unknown ? .null : .boolean(self == .yes) }

    static func and(_ left: Truth, _ right: () throws -> Truth) rethrows -> Truth {
        if left == .no { return .no }
        let right = try right()
        if right == .no { return .no }
        return left == .yes && right == .yes ? .yes : .unknown
    }

    static func or(_ left: Truth, _ right: () throws -> Truth) rethrows -> Truth {
        if left == .yes { return .yes }
        let right = try right()
        if right == .yes { return .yes }
        return left == .no && right == .no ? .no : .unknown
    }

    var negated: Truth {
        switch self {
        case .yes: return .no
        case .no: return .yes
        case .unknown: return .unknown
        }
    }
}

/// Why an expression could not be evaluated; the caller adds table, row and position.
struct EvaluationFailure: Error {
    let message: String
    let offset: Int
}

extension Value {
    /// Orders two non-NULL values of compatible kinds: numbers with numbers,
    /// strings with strings, and a string with a date or GUID it spells.
    /// Returns nil when either is NULL; throws a message for incompatible kinds.
    static func compare(_ left: Value, _ right: Value) throws(CompareFailure) -> ComparisonResult? {
        switch (left, right) {
        case (.null, _), (_, .null): return nil
        case let (.integer(a), .integer(b)): return order(a, b)
        case let (.string(a), .string(b)): return codePointOrder(a, b)
        case let (.boolean(a), .boolean(b)): return order(a ? 1 : 0, b ? 1 : 0)
        case let (.date(a), .date(b)): return order(a, b)
        case let (.guid(a), .guid(b)): return order(a.uuidString, b.uuidString)
        case let (.blob(a), .blob(b)): return a.lexicographicallyPrecedes(b) ? .orderedAscending : a == b ? .orderedSame : .orderedDescending
        case (.decimal, _), (_, .decimal):
            guard let a = left.decimalValue, let b = right.decimalValue else { break }
            return order(a, b)
        case (.integer, .double), (.double, .integer), (.double, .double):
            return order(left.doubleValue!, right.doubleValue!)
        case let (.date(a), .string(text)):
            guard let b = ISO8601.date(from: text) else { throw CompareFailure("'\(text)' is not a date") }
            return order(a, b)
        case (.string, .date):
            return try compare(right, left).map(Self.reversed)
        case let (.guid(a), .string(text)):
            guard let b = UUID(uuidString: text.trimmingCharacters(in: CharacterSet(charactersIn: "{}"))) else {
                throw CompareFailure("'\(text)' is not a GUID")
            }
            return order(a.uuidString, b.uuidString)
        case (.string, .guid):
            return try compare(right, left).map(Self.reversed)
        default: break
        }
        throw CompareFailure("cannot compare \(left.kindName) \(left) with \(right.kindName) \(right)")
    }

    /// Orders strings by Unicode code points (their UTF-8 bytes), like SQLite's BINARY collation.
    static func codePointOrder(_ a: String, _ b: String) -> ComparisonResult {
        if sameCodePoints(a, b) { return .orderedSame }
        return a.utf8.lexicographicallyPrecedes(b.utf8) ? .orderedAscending : .orderedDescending
    }

    struct CompareFailure: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    private static func order<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult {
        a < b ? .orderedAscending : a == b ? .orderedSame : .orderedDescending
    }

    private static func reversed(_ result: ComparisonResult) -> ComparisonResult {
        switch result {
        case .orderedAscending: return .orderedDescending
        case .orderedDescending: return .orderedAscending
        case .orderedSame: return .orderedSame
        }
    }
}

extension BinaryOperator {
    /// Whether an ordering satisfies this comparison operator.
    func holds(for result: ComparisonResult) -> Bool {
        switch self {
        case .equal: return result == .orderedSame
        case .notEqual: return result != .orderedSame
        case .less: return result == .orderedAscending
        case .lessOrEqual: return result != .orderedDescending
        case .greater: return result == .orderedDescending
        case .greaterOrEqual: return result != .orderedAscending
        default: return false
        }
    }

    /// `+ - * / % ||` on two values. NULL in, NULL out; division by zero gives NULL.
    /// Integers stay integers (overflow is an error) except for a `/` that does not divide evenly.
    func arithmetic(_ left: Value, _ right: Value) throws(CompareFailure) -> Value {
        if left.isNull || right.isNull { return .null }
        if self == .concatenate || (self == .add && (left.stringValue != nil || right.stringValue != nil)) {
            guard left.stringValue != nil || right.stringValue != nil else {
                throw CompareFailure("'||' joins strings; \(left) and \(right) are not strings")
            }
            return .string(left.text + right.text)
        }
        switch (left, right) {
        case let (.integer(a), .integer(b)):
            let (result, overflow): (Int64, Bool)
            switch self {
            case .add: (result, overflow) = a.addingReportingOverflow(b)
            case .subtract: (result, overflow) = a.subtractingReportingOverflow(b)
            case .multiply: (result, overflow) = a.multipliedReportingOverflow(by: b)
            case .remainder:
                if b == 0 { return .null }
                // Swift reports Int64.min % -1 as an overflow; the remainder is 0.
                (result, overflow) = b == -1 ? (0, false) : a.remainderReportingOverflow(dividingBy: b)
            default:
                if b == 0 { return .null }
                // Int64.min / -1 is the one quotient that overflows; it is not integral then either.
                let (remainder, remainderOverflows) = a.remainderReportingOverflow(dividingBy: b)
                let (quotient, quotientOverflows) = a.dividedReportingOverflow(by: b)
                if !remainderOverflows, !quotientOverflows, remainder == 0 { return .integer(quotient) }
                return .double(Double(a) / Double(b))
            }
            if overflow { throw CompareFailure("\(a) \(rawValue) \(b) overflows a 64-bit integer") }
            return .integer(result)
        case (.decimal, _), (_, .decimal):
            guard let a = left.decimalValue, let b = right.decimalValue else { break }
            switch self {
            case .add: return .decimal(a + b)
            case .subtract: return .decimal(a - b)
            case .multiply: return .decimal(a * b)
            case .divide: return b == 0 ? .null : .decimal(a / b)
            default:
                guard let x = left.doubleValue, let y = right.doubleValue, y != 0 else { return .null }
                return .double(x.truncatingRemainder(dividingBy: y))
            }
        default:
            guard let a = left.doubleValue, let b = right.doubleValue else { break }
            switch self {
            case .add: return .double(a + b)
            case .subtract: return .double(a - b)
            case .multiply: return .double(a * b)
            case .divide: return b == 0 ? .null : .double(a / b)
            default: return b == 0 ? .null : .double(a.truncatingRemainder(dividingBy: b))
            }
        }
        throw CompareFailure("'\(rawValue)' needs numbers; got \(left.kindName) \(left) and \(right.kindName) \(right)")
    }

    typealias CompareFailure = Value.CompareFailure

    /// The common integer cases of ``arithmetic(_:_:)`` without building a `Value` per operand:
    /// nil for everything else (an overflow, a division, by zero), which `arithmetic` decides.
    @inline(__always) func integerResult(_ a: Int64, _ b: Int64) -> Int64? {
        switch self {
        case .add:
            let (result, overflow) = a.addingReportingOverflow(b)
            return overflow ? nil : result
        case .subtract:
            let (result, overflow) = a.subtractingReportingOverflow(b)
            return overflow ? nil : result
        case .multiply:
            let (result, overflow) = a.multipliedReportingOverflow(by: b)
            return overflow ? nil : result
        case .remainder:
            return b == 0 || b == -1 ? nil : a % b
        default:
            return nil
        }
    }
}

/// A compiled LIKE pattern: `%` any run, `_` any one character, case-insensitive.
/// (A data server's SQLite runs this same matcher for DA SQL's `LIKE`.)
package struct LikePattern {
    private enum Part: Equatable { case literal(Character), one, any }
    private let parts: [Part]

    package init(_ pattern: String, escape: Character?) {
        var parts: [Part] = []
        var escaping = false
        for character in pattern.lowercased() {
            if escaping {
                parts.append(.literal(character))
                escaping = false
            } else if character == escape {
                escaping = true
            } else if character == "%" {
                if parts.last != .any { parts.append(.any) }
            } else if character == "_" {
                parts.append(.one)
            } else {
                parts.append(.literal(character))
            }
        }
        self.parts = parts
    }

    package func matches(_ text: String) -> Bool {
        let characters = Array(text.lowercased())
        // Classic wildcard matching with backtracking to the last `%`.
        var textIndex = 0, partIndex = 0
        var starPart = -1, starText = 0
        while textIndex < characters.count {
            if partIndex < parts.count {
                switch parts[partIndex] {
                case .any:
                    starPart = partIndex
                    starText = textIndex
                    partIndex += 1
                    continue
                case .one:
                    textIndex += 1
                    partIndex += 1
                    continue
                case .literal(let character) where character == characters[textIndex]:
                    textIndex += 1
                    partIndex += 1
                    continue
                default: break
                }
            }
            guard starPart >= 0 else { return false }
            partIndex = starPart + 1
            starText += 1
            textIndex = starText
        }
        while partIndex < parts.count, parts[partIndex] == .any { partIndex += 1 }
        return partIndex == parts.count
    }
}

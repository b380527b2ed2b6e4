import Foundation

/// The built-in functions of the expression language.
enum ExpressionFunction: String, CaseIterable {
    case upper = "UPPER", lower = "LOWER", length = "LENGTH", len = "LEN", trim = "TRIM"
    case abs = "ABS", round = "ROUND", coalesce = "COALESCE", substring = "SUBSTRING"
    case year = "YEAR", month = "MONTH", day = "DAY"

    /// The allowed numbers of arguments.
    var arity: ClosedRange<Int> {
        switch self {
        case .round: return 1...2
        case .substring: return 2...3
        case .coalesce: return 1...Int.max
        default: return 1...1
        }
    }

    /// The allowed numbers of arguments in words: `1`, `2 to 3`, `any number of`.
    var arityDescription: String {
        if arity.lowerBound == arity.upperBound { return "\(arity.lowerBound)" }
        return arity.upperBound == Int.max ? "any number of" : "\(arity.lowerBound) to \(arity.upperBound)"
    }

    /// Applies the function. NULL arguments give NULL (COALESCE excepted).
    func apply(_ arguments: [Value]) throws(Value.CompareFailure) -> Value {
        if self == .coalesce { return arguments.first { !$0.isNull } ?? .null }
        if arguments.contains(where: \.isNull) { return .null }
        let first = arguments[0]
        switch self {
        case .upper, .lower, .trim, .length, .len, .substring:
            guard let text = first.stringValue else { throw failure("a string", got: first) }
            switch self {
            case .upper: return .string(text.uppercased())
            case .lower: return .string(text.lowercased())
            case .trim: return .string(text.trimmingCharacters(in: .whitespacesAndNewlines))
            case .substring:
                guard let start = arguments[1].integerValue else { throw failure("an integer start", got: arguments[1]) }
                let length = arguments.count > 2 ? arguments[2].integerValue : Int64(text.count)
                guard let length, length >= 0 else { throw failure("a non-negative integer length", got: arguments[2]) }
                let from = start > 0 ? Int(start) - 1 : 0
                return .string(String(text.dropFirst(from).prefix(Int(length))))
            default: return .integer(Int64(text.count))
            }
        case .abs:
            switch first {
            case .integer(let value):
                // |Int64.min| does not fit an Int64.
                return value == .min ? .double(-Double(value)) : .integer(Swift.abs(value))
            case .decimal(let value): return .decimal(value < 0 ? -value : value)
            case .double(let value): return .double(Swift.abs(value))
            default: throw failure("a number", got: first)
            }
        case .round:
            let places = arguments.count > 1 ? arguments[1].integerValue ?? 0 : 0
            switch first {
            case .integer: return first
            case .decimal(var value):
                var result = Decimal()
                NSDecimalRound(&result, &value, Int(places), .plain)
                return .decimal(result)
            case .double(let value):
                let scale = pow(10.0, Double(places))
                return .double((value * scale).rounded() / scale)
            default: throw failure("a number", got: first)
            }
        case .year, .month, .day:
            guard let date = first.dateValue else { throw failure("a date", got: first) }
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            let component: Calendar.Component = self == .year ? .year : self == .month ? .month : .day
            return .integer(Int64(calendar.component(component, from: date)))
        case .coalesce:
            return .null
        }
    }

    private func failure(_ expected: String, got value: Value) -> Value.CompareFailure {
        Value.CompareFailure("\(rawValue) needs \(expected), got \(value.kindName) \(value)")
    }
}

import Foundation

/// An aggregate over a group's rows. NULLs are skipped (`COUNT(*)` counts rows); a group with
/// no values gives NULL, except `COUNT`, which gives 0. `SUM` and `AVG` take numbers only; an
/// integer sum that overflows is an error, as integer arithmetic is; `AVG` of integers is a float.
struct Aggregate {
    let function: AggregateFunction
    let distinct: Bool
    /// Where the aggregate stands in the query (for errors).
    let offset: Int

    func value(of rows: [Int], reading read: ExpressionCompiler.Evaluate?) throws -> Value {
        guard let read else { return .integer(Int64(rows.count)) }
        var values = try rows.map(read).filter { !$0.isNull }
        if distinct {
            var seen = Set<Value>()
            values = values.filter { seen.insert(QueryKey.of($0)).inserted }
        }
        switch function {
        case .count:
            return .integer(Int64(values.count))
        case .sum:
            return try sum(values)
        case .average:
            switch try sum(values) {
            case .null: return .null
            case .integer(let total): return .double(Double(total) / Double(values.count))
            case .double(let total): return .double(total / Double(values.count))
            case .decimal(let total): return .decimal(total / Decimal(values.count))
            case let other: return other
            }
        case .minimum, .maximum:
            var best: Value = .null
            for value in values {
                guard let order = try compare(value, best) else {
                    best = value
                    continue
                }
                if (function == .minimum && order == .orderedAscending) || (function == .maximum && order == .orderedDescending) {
                    best = value
                }
            }
            return best
        }
    }

    private func sum(_ values: [Value]) throws -> Value {
        var total: Value = .null
        for value in values {
            switch value {
            case .integer, .double, .decimal: break
            default: throw EvaluationFailure(message: "\(function.rawValue) needs numbers, got \(value.kindName) \(value)", offset: offset)
            }
            total = total.isNull ? value : try add(total, value)
        }
        return total
    }

    private func compare(_ left: Value, _ right: Value) throws -> ComparisonResult? {
        do {
            return try Value.compare(left, right)
        } catch {
            throw EvaluationFailure(message: "\(function.rawValue): \(error.message)", offset: offset)
        }
    }

    private func add(_ left: Value, _ right: Value) throws -> Value {
        do {
            return try BinaryOperator.add.arithmetic(left, right)
        } catch {
            throw EvaluationFailure(message: "\(function.rawValue): \(error.message)", offset: offset)
        }
    }
}

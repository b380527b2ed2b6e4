import Foundation

/// Turns an expression into closures over a table's slots.
///
/// Compiled right before each evaluation, so the closures can capture the
/// table's column buffers as they are now: a comparison of a stored field with
/// a constant reads the typed column directly for unchanged rows (the fast
/// path), and goes through the row's values only for rows with changes.
struct ExpressionCompiler {
    typealias Evaluate = (Int) throws -> Value
    typealias Condition = (Int) throws -> Truth

    let table: DataTable
    let parameters: [String: Value]
    let text: String

    // MARK: Conditions

    func condition(_ node: ExpressionNode) throws -> Condition {
        switch node {
        case .binary(.and, let left, let right, _):
            let left = try condition(left), right = try condition(right)
            return { slot in try Truth.and(try left(slot)) { try right(slot) } }
        case .binary(.or, let left, let right, _):
            let left = try condition(left), right = try condition(right)
            return { slot in try Truth.or(try left(slot)) { try right(slot) } }
        case .not(let operand):
            let operand = try condition(operand)
            return { slot in try operand(slot).negated }
        case .binary(let op, let left, let right, let offset) where op.isComparison:
            return try comparison(op, left, right, offset: offset)
        case .isNull(let operand, let negated):
            let operand = try value(operand)
            return { slot in Truth(try operand(slot).isNull != negated) }
        case .inList(let operand, let list, let negated):
            return try inList(operand, list, negated: negated)
        case .like(let operand, let pattern, let escape, let negated, let offset):
            return try like(operand, pattern, escape: escape, negated: negated, offset: offset)
        case .between(let operand, let low, let high, let negated):
            let atLeast = try comparison(.greaterOrEqual, operand, low, offset: 0)
            let atMost = try comparison(.lessOrEqual, operand, high, offset: 0)
            return { slot in
                let truth = try Truth.and(try atLeast(slot)) { try atMost(slot) }
                return negated ? truth.negated : truth
            }
        default:
            let evaluate = try value(node)
            let offset = Self.offset(of: node)
            return { slot in
                switch try evaluate(slot) {
                case .boolean(let bool): return Truth(bool)
                case .null: return .unknown
                case let other:
                    throw EvaluationFailure(message: "the condition gives \(other.kindName) \(other), not TRUE or FALSE", offset: offset)
                }
            }
        }
    }

    private func comparison(_ op: BinaryOperator, _ left: ExpressionNode, _ right: ExpressionNode, offset: Int) throws -> Condition {
        let leftValue = try value(left), rightValue = try value(right)
        let generic: Condition = { slot in
            do {
                guard let order = try Value.compare(try leftValue(slot), try rightValue(slot)) else { return .unknown }
                return Truth(op.holds(for: order))
            } catch let failure as Value.CompareFailure {
                throw EvaluationFailure(message: failure.message, offset: offset)
            }
        }
        if case .field(let name, _) = left, let field = table.fieldIndex(named: name), let constant = try constant(right),
           let fast = fastComparison(op, field: field, constant: constant, fallback: generic) {
            return fast
        }
        if case .field(let name, _) = right, let field = table.fieldIndex(named: name), let constant = try constant(left),
           let fast = fastComparison(op.flipped, field: field, constant: constant, fallback: generic) {
            return fast
        }
        return generic
    }

    /// `field op constant` on the typed column, for rows without changes.
    private func fastComparison(_ op: BinaryOperator, field: Int, constant: Value, fallback: @escaping Condition) -> Condition? {
        if constant.isNull { return { _ in .unknown } }
        switch table.columns[field] {
        case .integer(let column):
            guard case .integer(let key) = constant else { return nil }
            return typedComparison(op, column, key, fallback)
        case .double(let column):
            guard let key = constant.doubleValue else { return nil }
            return typedComparison(op, column, key, fallback)
        case .string(let column):
            guard let key = constant.stringValue else { return nil }
            return typedComparison(op, column, key, fallback)
        case .date(let column):
            guard let key = constant.dateValue ?? constant.stringValue.flatMap(ISO8601.date(from:)) else { return nil }
            return typedComparison(op, column, key, fallback)
        case .boolean(let column):
            guard let key = constant.booleanValue, op == .equal || op == .notEqual else { return nil }
            let elements = column.elements, nulls = column.nullWords, dirty = table.dirty
            let wanted = op == .equal ? key : !key
            return { slot in
                if dirty[slot] != 0 { return try fallback(slot) }
                if nulls[slot &>> 6] & (1 &<< UInt64(slot & 63)) != 0 { return .unknown }
                return Truth(elements[slot] == wanted)
            }
        default:
            return nil
        }
    }

    private func typedComparison<E: Comparable>(_ op: BinaryOperator, _ column: TypedColumn<E>, _ key: E,
                                                _ fallback: @escaping Condition) -> Condition {
        let elements = column.elements, nulls = column.nullWords, dirty = table.dirty
        func make(_ test: @escaping (E) -> Bool) -> Condition {
            { slot in
                if dirty[slot] != 0 { return try fallback(slot) }
                if nulls[slot &>> 6] & (1 &<< UInt64(slot & 63)) != 0 { return .unknown }
                return test(elements[slot]) ? .yes : .no
            }
        }
        switch op {
        case .equal: return make { $0 == key }
        case .notEqual: return make { $0 != key }
        case .less: return make { $0 < key }
        case .lessOrEqual: return make { $0 <= key }
        case .greater: return make { $0 > key }
        default: return make { $0 >= key }
        }
    }

    private func inList(_ operand: ExpressionNode, _ list: [ExpressionNode], negated: Bool) throws -> Condition {
        let operand = try value(operand)
        let items = try list.map { try value($0) }
        let offset = Self.offset(of: list[0])
        return { slot in
            let subject = try operand(slot)
            var truth = Truth.no
            for item in items {
                do {
                    guard let order = try Value.compare(subject, try item(slot)) else { truth = .unknown; continue }
                    if order == .orderedSame { truth = .yes; break }
                } catch let failure as Value.CompareFailure {
                    throw EvaluationFailure(message: failure.message, offset: offset)
                }
            }
            return negated ? truth.negated : truth
        }
    }

    private func like(_ operand: ExpressionNode, _ pattern: ExpressionNode, escape: Character?, negated: Bool,
                      offset: Int) throws -> Condition {
        let operand = try value(operand)
        let fixed = try constant(pattern).flatMap(\.stringValue).map { LikePattern($0, escape: escape) }
        let patternValue = try value(pattern)
        return { slot in
            let subject = try operand(slot)
            if subject.isNull { return .unknown }
            guard let text = subject.stringValue else {
                throw EvaluationFailure(message: "LIKE needs a string, got \(subject.kindName) \(subject)", offset: offset)
            }
            let compiled: LikePattern
            if let fixed { compiled = fixed } else {
                let value = try patternValue(slot)
                if value.isNull { return .unknown }
                guard let string = value.stringValue else {
                    throw EvaluationFailure(message: "the LIKE pattern must be a string, got \(value.kindName) \(value)", offset: offset)
                }
                compiled = LikePattern(string, escape: escape)
            }
            let truth = Truth(compiled.matches(text))
            return negated ? truth.negated : truth
        }
    }

    // MARK: Values

    func value(_ node: ExpressionNode) throws -> Evaluate {
        if let constant = try constant(node) { return { _ in constant } }
        switch node {
        case .field(let name, let offset):
            if let field = table.fieldIndex(named: name) {
                let table = self.table
                return { slot in table.postedValue(slot: slot, field: field) }
            }
            guard table.isVirtualField(named: name) else {
                let error = table.unknownField(name)
                throw RelataError(.unknownField, "\(error.message) in \"\(text)\"", table: table.name, field: name,
                                  location: ExpressionParser.location(of: offset, in: text))
            }
            let table = self.table
            if let prefetched = try prefetch(name) {
                return { slot in prefetched[slot] }
            }
            return { slot in try table.virtualValue(named: name, slot: slot) }
        case .negate(let operand, let offset):
            let operand = try value(operand)
            return { slot in
                do { return try BinaryOperator.subtract.arithmetic(.integer(0), try operand(slot)) } catch let failure as Value.CompareFailure {
                    throw EvaluationFailure(message: failure.message, offset: offset)
                }
            }
        case .binary(let op, let left, let right, let offset) where !op.isComparison && op != .and && op != .or:
            let left = try value(left), right = try value(right)
            return { slot in
                do { return try op.arithmetic(try left(slot), try right(slot)) } catch let failure as Value.CompareFailure {
                    throw EvaluationFailure(message: failure.message, offset: offset)
                }
            }
        case .function(let name, let arguments, let offset):
            guard let function = ExpressionFunction(rawValue: name) else {
                let known = ExpressionFunction.allCases.map(\.rawValue).joined(separator: ", ")
                throw syntaxError("unknown function \(name) (known: \(known))", at: offset)
            }
            guard function.arity.contains(arguments.count) else {
                throw syntaxError("\(name) takes \(function.arityDescription) arguments, got \(arguments.count)", at: offset)
            }
            let arguments = try arguments.map { try value($0) }
            return { slot in
                do { return try function.apply(try arguments.map { try $0(slot) }) } catch let failure as Value.CompareFailure {
                    throw EvaluationFailure(message: failure.message, offset: offset)
                }
            }
        case .qualifiedField(_, _, let offset), .aggregate(_, _, _, let offset), .inQuery(_, _, _, let offset), .exists(_, let offset):
            throw syntaxError("qualified names, aggregates and subqueries belong in a DA SQL query, not a where expression", at: offset)
        default:
            let condition = try condition(node)
            return { slot in try condition(slot).value }
        }
    }

    /// A calculated field that can compute many rows at once is computed for every
    /// visible row before the filter runs, instead of once per row as it goes.
    private func prefetch(_ name: String) throws -> [Value]? {
        guard table.calculatedFields.contains(where: { $0.computeMany != nil && $0.name.caseInsensitiveCompare(name) == .orderedSame }) else {
            return nil
        }
        let slots = table.visibleSlots
        var bySlot = [Value](repeating: .null, count: table.slotCount)
        for (slot, value) in zip(slots, try table.values(ofField: name, slots: slots)) { bySlot[slot] = value }
        return bySlot
    }

    /// The value of a node that does not depend on the row (literals, parameters, negated constants).
    private func constant(_ node: ExpressionNode) throws -> Value? {
        switch node {
        case .literal(let value): return value
        case .parameter(let name, let offset):
            guard let value = parameters[name] else {
                let given = parameters.keys.sorted().map { ":" + $0 }.joined(separator: ", ")
                throw RelataError(.expressionEvaluation,
                                  "no value was given for parameter :\(name) (given: \(given.isEmpty ? "none" : given)) in \"\(text)\"",
                                  table: table.name, location: ExpressionParser.location(of: offset, in: text))
            }
            return value
        default: return nil
        }
    }

    private func syntaxError(_ message: String, at offset: Int) -> RelataError {
        var error = ExpressionParser.syntaxError(message, at: offset, in: text)
        error.table = table.name
        return error
    }

    static func offset(of node: ExpressionNode) -> Int {
        switch node {
        case .field(_, let offset), .parameter(_, let offset), .negate(_, let offset), .binary(_, _, _, let offset),
             .like(_, _, _, _, let offset), .function(_, _, let offset), .qualifiedField(_, _, let offset),
             .aggregate(_, _, _, let offset), .inQuery(_, _, _, let offset), .exists(_, let offset):
            return offset
        default:
            return node.children.first.map(offset(of:)) ?? 0
        }
    }
}

extension BinaryOperator {
    /// The operator with its operands swapped: `a < b` is `b > a`.
    package var flipped: BinaryOperator {
        switch self {
        case .less: return .greater
        case .lessOrEqual: return .greaterOrEqual
        case .greater: return .less
        case .greaterOrEqual: return .lessOrEqual
        default: return self
        }
    }
}

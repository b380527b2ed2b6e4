import Foundation

/// What an expression's names mean to the compiler: a table's fields (``TableNames``), or
/// the tables of a DA SQL query. The operators, functions and NULL logic are the compiler's,
/// the same whatever the names read.
protocol ExpressionNames {
    /// The table errors name, if any.
    var tableName: String? { get }
    /// A closure reading a name per row: a field, and in a query a qualified field, an
    /// aggregate's result or a subquery's.
    func evaluator(for node: ExpressionNode, compiler: ExpressionCompiler) throws -> ExpressionCompiler.Evaluate
    /// A comparison of a name with a constant faster than the general one, when there is one.
    func fastComparison(_ op: BinaryOperator, _ node: ExpressionNode, _ constant: Value,
                        fallback: @escaping ExpressionCompiler.Condition) -> ExpressionCompiler.Condition?
}

/// Turns an expression into closures over rows numbered by an `Int` (a table's slots, or
/// the rows of a query).
///
/// Compiled right before each evaluation, so the closures can capture the data as it is now
/// (for a table, its column buffers: see ``TableNames``).
struct ExpressionCompiler {
    typealias Evaluate = (Int) throws -> Value
    typealias Condition = (Int) throws -> Truth

    let names: any ExpressionNames
    let parameters: [String: Value]
    let text: String

    init(names: any ExpressionNames, parameters: [String: Value], text: String) {
        self.names = names
        self.parameters = parameters
        self.text = text
    }

    /// A compiler for a where expression over a table.
    init(table: DataTable, parameters: [String: Value], text: String) {
        self.init(names: TableNames(table: table, text: text), parameters: parameters, text: text)
    }

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
        if let constant = try constant(right), let fast = names.fastComparison(op, left, constant, fallback: generic) {
            return fast
        }
        if let constant = try constant(left), let fast = names.fastComparison(op.flipped, right, constant, fallback: generic) {
            return fast
        }
        return generic
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
        case .field, .qualifiedField, .aggregate, .inQuery, .exists:
            return try names.evaluator(for: node, compiler: self)
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
                let l = try left(slot), r = try right(slot)
                if case .integer(let a) = l, case .integer(let b) = r, let result = op.integerResult(a, b) { return .integer(result) }
                do { return try op.arithmetic(l, r) } catch let failure as Value.CompareFailure {
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
        default:
            let condition = try condition(node)
            return { slot in try condition(slot).value }
        }
    }

    /// The value of a node that does not depend on the row (literals, parameters, negated constants).
    func constant(_ node: ExpressionNode) throws -> Value? {
        switch node {
        case .literal(let value): return value
        case .parameter(let name, let offset):
            guard let value = parameters[name] else {
                let given = parameters.keys.sorted().map { ":" + $0 }.joined(separator: ", ")
                throw RelataError(.expressionEvaluation,
                                  "no value was given for parameter :\(name) (given: \(given.isEmpty ? "none" : given)) in \"\(text)\"",
                                  table: names.tableName, location: ExpressionParser.location(of: offset, in: text))
            }
            return value
        default: return nil
        }
    }

    func syntaxError(_ message: String, at offset: Int) -> RelataError {
        var error = ExpressionParser.syntaxError(message, at: offset, in: text)
        error.table = names.tableName
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

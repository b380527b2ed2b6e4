/// A parsed filter expression: the WHERE-clause language of Relata.
///
/// Literals (`42`, `1.5`, `'text'`, `TRUE`, `FALSE`, `NULL`), field names
/// (`ClientName`, `"Field with spaces"`, `[Field]`), named parameters
/// (`:minimum`), arithmetic (`+ - * / %`, `||` to join strings),
/// comparisons (`= <> != < <= > >=`), `AND`, `OR`, `NOT`, `IN (…)`,
/// `LIKE` (case-insensitive, `%` and `_`, optional `ESCAPE`), `BETWEEN … AND …`,
/// `IS [NOT] NULL`, and the functions `UPPER`, `LOWER`, `LENGTH`, `TRIM`,
/// `ABS`, `ROUND`, `COALESCE`, `SUBSTRING`, `YEAR`, `MONTH`, `DAY`.
///
/// NULL follows SQL's three-valued logic: a comparison with NULL is unknown,
/// and a row is kept only when the whole expression is true.
///
/// ```swift
/// let cheap = try Expression("Price < :limit AND Discontinued = FALSE")
/// let rows = try products.rows(where: cheap, parameters: ["limit": 10])
/// ```
///
/// A syntax error is a ``RelataError`` with code ``RelataError/Code/expressionSyntax``
/// whose ``RelataError/location`` gives the column.
public struct Expression: Sendable, Hashable, CustomStringConvertible {
    /// The text the expression was parsed from.
    public let text: String
    package let root: ExpressionNode

    /// Parses an expression.
    ///
    /// - Throws: ``RelataError/Code/expressionSyntax`` with the position of the problem.
    public init(_ text: String) throws {
        self.text = text
        var parser = ExpressionParser(text: text)
        self.root = try parser.parseExpression()
    }

    public var description: String { text }

    /// The names of the `:parameters` the expression uses.
    public var parameterNames: Set<String> { root.parameterNames }

    /// The names of the fields the expression reads.
    public var fieldNames: Set<String> { root.fieldNames }
}

/// The syntax tree of an expression. `offset` is the node's position in the text (for errors).
package indirect enum ExpressionNode: Sendable, Hashable {
    case literal(Value)
    case field(String, offset: Int)
    case parameter(String, offset: Int)
    case negate(ExpressionNode, offset: Int)
    case not(ExpressionNode)
    case binary(BinaryOperator, ExpressionNode, ExpressionNode, offset: Int)
    case isNull(ExpressionNode, negated: Bool)
    case inList(ExpressionNode, [ExpressionNode], negated: Bool)
    case like(ExpressionNode, pattern: ExpressionNode, escape: Character?, negated: Bool, offset: Int)
    case between(ExpressionNode, low: ExpressionNode, high: ExpressionNode, negated: Bool)
    case function(String, [ExpressionNode], offset: Int)
    // DA SQL only (``ExpressionGrammar/query``):
    /// `qualifier.name`: a field of the table a query calls `qualifier`.
    case qualifiedField(qualifier: String, name: String, offset: Int)
    /// `COUNT(*)` (no argument), `SUM([DISTINCT] x)`, …
    case aggregate(AggregateFunction, ExpressionNode?, distinct: Bool, offset: Int)
    /// `x [NOT] IN (SELECT …)`.
    case inQuery(ExpressionNode, SelectStatement, negated: Bool, offset: Int)
    /// `EXISTS (SELECT …)` (`NOT EXISTS` is `.not(.exists(…))`).
    case exists(SelectStatement, offset: Int)

    var children: [ExpressionNode] {
        switch self {
        case .literal, .field, .parameter: return []
        case .negate(let node, _), .not(let node), .isNull(let node, _): return [node]
        case .binary(_, let left, let right, _): return [left, right]
        case .inList(let node, let list, _): return [node] + list
        case .like(let node, let pattern, _, _, _): return [node, pattern]
        case .between(let node, let low, let high, _): return [node, low, high]
        case .function(_, let arguments, _): return arguments
        case .qualifiedField, .exists: return []
        case .aggregate(_, let argument, _, _): return argument.map { [$0] } ?? []
        case .inQuery(let node, _, _, _): return [node]
        }
    }

    var parameterNames: Set<String> {
        switch self {
        case .parameter(let name, _): return [name]
        case .inQuery(let node, let query, _, _): return node.parameterNames.union(query.parameterNames)
        case .exists(let query, _): return query.parameterNames
        default: return children.reduce(into: []) { $0.formUnion($1.parameterNames) }
        }
    }

    var fieldNames: Set<String> {
        if case .field(let name, _) = self { return [name] }
        return children.reduce(into: []) { $0.formUnion($1.fieldNames) }
    }
}

/// Which language a text is parsed as: a where expression, or a DA SQL query (which adds
/// qualified names, aggregates, subqueries and comments).
package enum ExpressionGrammar: Sendable {
    case expression, query
}

package enum BinaryOperator: String, Sendable, Hashable {
    case add = "+", subtract = "-", multiply = "*", divide = "/", remainder = "%", concatenate = "||"
    case equal = "=", notEqual = "<>", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case and = "AND", or = "OR"

    package var isComparison: Bool {
        switch self {
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual: return true
        default: return false
        }
    }
}

extension ExpressionNode {
    /// The node with each direct child replaced by `transform(child)` (subqueries are left as they are).
    package func mappingChildren(_ transform: (ExpressionNode) throws -> ExpressionNode) rethrows -> ExpressionNode {
        switch self {
        case .literal, .field, .parameter, .qualifiedField, .exists: return self
        case .negate(let node, let offset): return .negate(try transform(node), offset: offset)
        case .not(let node): return .not(try transform(node))
        case .binary(let op, let left, let right, let offset): return .binary(op, try transform(left), try transform(right), offset: offset)
        case .isNull(let node, let negated): return .isNull(try transform(node), negated: negated)
        case .inList(let node, let list, let negated): return .inList(try transform(node), try list.map(transform), negated: negated)
        case .like(let node, let pattern, let escape, let negated, let offset):
            return .like(try transform(node), pattern: try transform(pattern), escape: escape, negated: negated, offset: offset)
        case .between(let node, let low, let high, let negated):
            return .between(try transform(node), low: try transform(low), high: try transform(high), negated: negated)
        case .function(let name, let arguments, let offset): return .function(name, try arguments.map(transform), offset: offset)
        case .aggregate(let function, let argument, let distinct, let offset):
            return .aggregate(function, try argument.map(transform), distinct: distinct, offset: offset)
        case .inQuery(let node, let query, let negated, let offset): return .inQuery(try transform(node), query, negated: negated, offset: offset)
        }
    }
}

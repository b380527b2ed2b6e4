/// The syntax tree of a DA SQL `SELECT`: names as written, not yet checked against a schema.
/// Offsets are positions in the query's text (for errors).
package struct SelectStatement: Sendable, Hashable {
    package var distinct = false
    package var columns: [SelectColumn] = []
    package var from: QueryTable
    package var joins: [Join] = []
    package var filter: ExpressionNode?
    package var groupBy: [ExpressionNode] = []
    package var having: ExpressionNode?
    package var orderBy: [OrderItem] = []
    package var limit: ExpressionNode?
    package var offset: ExpressionNode?
    /// Where `LIMIT`'s and `OFFSET`'s values stand in the text (literals carry no position).
    package var limitPosition = 0, offsetPosition = 0
}

/// One entry of the select list.
package enum SelectColumn: Sendable, Hashable {
    /// `*`, or `alias.*` for one table's fields.
    case all(qualifier: String?, offset: Int)
    /// An expression, with the name it is given (`AS name`) if any.
    case expression(ExpressionNode, alias: String?, offset: Int)
}

/// A table in `FROM` or `JOIN`, with the name the query calls it by.
package struct QueryTable: Sendable, Hashable {
    package var name: String
    package var alias: String?
    package var offset: Int

    /// The name the rest of the query uses for it.
    package var scopeName: String { alias ?? name }
}

/// `[INNER | LEFT [OUTER]] JOIN table ON condition`.
package struct Join: Sendable, Hashable {
    package enum Kind: String, Sendable, Hashable {
        case inner = "INNER", left = "LEFT"
    }
    package var kind: Kind
    package var table: QueryTable
    package var condition: ExpressionNode
}

/// `ORDER BY expression [ASC | DESC]`; a number orders by that column of the select list.
package struct OrderItem: Sendable, Hashable {
    package var expression: ExpressionNode
    package var descending: Bool
    /// Where the expression starts in the text.
    package var position: Int
}

/// The aggregate functions of DA SQL.
package enum AggregateFunction: String, Sendable, Hashable, CaseIterable {
    case count = "COUNT", sum = "SUM", average = "AVG", minimum = "MIN", maximum = "MAX"
}

extension SelectStatement {
    /// Every expression of the statement (not of its subqueries), in the order written.
    package var expressions: [ExpressionNode] {
        var result = columnExpressions
        result += joins.map(\.condition)
        result += [filter].compactMap { $0 } + groupBy + [having].compactMap { $0 } + orderBy.map(\.expression)
        result += [limit, offset].compactMap { $0 }
        return result
    }

    /// The select list's expressions (stars are expanded when the query is checked).
    package var columnExpressions: [ExpressionNode] {
        columns.compactMap {
            if case .expression(let node, _, _) = $0 { return node }
            return nil
        }
    }

    /// The `:parameters` the statement and its subqueries use.
    package var parameterNames: Set<String> {
        expressions.reduce(into: []) { $0.formUnion($1.parameterNames) }
    }

    /// The subqueries in the statement's expressions (not nested deeper).
    package var subqueries: [SelectStatement] {
        var found: [SelectStatement] = []
        var pending = expressions
        while let node = pending.popLast() {
            switch node {
            case .inQuery(let operand, let query, _, _):
                found.append(query)
                pending.append(operand)
            case .exists(let query, _):
                found.append(query)
            default:
                pending += node.children
            }
        }
        return found
    }

    /// The tables the statement and its subqueries read, by schema name.
    package var tableNames: [String] {
        var names = [from.name] + joins.map(\.table.name)
        for query in subqueries { names += query.tableNames }
        return names
    }
}

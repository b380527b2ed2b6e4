/// Runs resolved DA SQL over in-memory tables, pending changes included: joins on equal
/// keys through a hash table (other conditions row by row), then `WHERE`, groups and
/// aggregates, `HAVING`, `DISTINCT`, `ORDER BY` (NULLs first, as Relata sorts), `OFFSET`
/// and `LIMIT`. Every expression is evaluated by the expression compiler, as filters are.
struct QueryEngine {
    /// The tables by lowercased name.
    let tables: [String: DataTable]
    let parameters: [String: Value]
    let text: String
    /// Checked as the engine works (each query and subquery run, and every 1,024 rows of its
    /// loops): past its time or cancelled, the answer stops.
    var limit: WorkLimit? = nil

    /// The answer's rows, each a value per column.
    func answer(_ statement: SelectStatement, outer: OuterRow?) throws -> [[Value]] {
        do {
            return try run(statement, outer: outer)
        } catch let failure as EvaluationFailure {
            throw RelataError(.expressionEvaluation, failure.message,
                              location: ExpressionParser.location(of: failure.offset, in: text, alwaysNamingTheLine: true))
        }
    }

    private func run(_ statement: SelectStatement, outer: OuterRow?) throws -> [[Value]] {
        try limit?.check()
        var rows = try joined(statement, outer: outer)
        if let filter = statement.filter {
            rows = rows.keeping(try matching(filter, in: names(rows, outer)))
        }
        // The values the answer needs, per output row: its columns, then its ORDER BY keys.
        var scope = names(rows, outer)
        var count = rows.count
        if statement.isAggregate {
            scope.groups = try groups(statement, rows: rows, names: scope)
            count = scope.groups?.firstRows.count ?? 0
        }
        var kept = Array(0..<count)
        if let having = statement.having {
            let condition = try compiler(scope).condition(having)
            kept = try kept.filter { try checkpoint($0); return try condition($0) == .yes }
        }
        let columns = try statement.columnExpressions.map { try compiler(scope).value($0) }
        if statement.orderBy.isEmpty && !statement.distinct {
            // In the order found: only the rows OFFSET and LIMIT keep are computed.
            if case .literal(.integer(let skip)) = statement.offset { kept = Array(kept.dropFirst(Int(clamping: skip))) }
            if case .literal(.integer(let limit)) = statement.limit { kept = Array(kept.prefix(Int(clamping: limit))) }
            var values: [[Value]] = []
            values.reserveCapacity(kept.count)
            for row in kept {
                try checkpoint(row)
                values.append(try columns.map { try $0(row) })
            }
            return values
        }
        let keys = try statement.orderBy.map { try compiler(scope).value($0.expression) }
        var answer = try kept.map { row in
            try checkpoint(row)
            return (values: try columns.map { try $0(row) }, keys: try keys.map { try $0(row) })
        }
        if statement.distinct {
            var seen = Set<[Value]>()
            answer = answer.filter { seen.insert($0.values.map(QueryKey.of)).inserted }
        }
        if !statement.orderBy.isEmpty {
            let descending = statement.orderBy.map(\.descending)
            answer = answer.enumerated().sorted { a, b in
                for (index, isDescending) in descending.enumerated() {
                    let order = DataTable.order(a.element.keys[index], b.element.keys[index], .standard)
                    if order != .orderedSame { return (order == .orderedAscending) != isDescending }
                }
                return a.offset < b.offset
            }.map(\.element)
        }
        var values = answer.map(\.values)
        if case .literal(.integer(let skip)) = statement.offset { values = Array(values.dropFirst(Int(clamping: skip))) }
        if case .literal(.integer(let limit)) = statement.limit { values = Array(values.prefix(Int(clamping: limit))) }
        return values
    }

    // MARK: Joins

    /// The rows of `FROM` and the joins.
    private func joined(_ statement: SelectStatement, outer: OuterRow?) throws -> QueryRows {
        let sources = [statement.from] + statement.joins.map(\.table)
        var byName: [String: DataTable] = [:]
        for source in sources { byName[source.scopeName.lowercased()] = try table(source.name) }
        let early = EarlyConditions.of(statement, tables: byName, parameters: parameters)
        /// A table's rows the early conditions keep (all its rows when there are none).
        func kept(of source: QueryTable, from slots: [Int]) throws -> [Int] {
            guard let conditions = early[source.scopeName.lowercased()], let table = byName[source.scopeName.lowercased()] else { return slots }
            let single = QueryRows(tables: [table], names: [source.scopeName], slots: [slots])
            let tests = try conditions.map { try compiler(names(single, outer)).condition($0) }
            return try slots.indices.filter { index in try tests.allSatisfy { try $0(index) == .yes } }.map { slots[$0] }
        }
        let first = try table(statement.from.name)
        // Rows found through the key's index skip the joins' ON as early conditions do.
        let indexed = statement.joins.isEmpty || EarlyConditions.joinsCannotFail(statement, tables: byName, parameters: parameters)
            ? try indexedSlots(first, statement: statement, outer: outer) : nil
        var rows = QueryRows(tables: [first], names: [statement.from.scopeName],
                             slots: [try kept(of: statement.from, from: indexed ?? first.visibleSlots)])
        for join in statement.joins {
            let table = try table(join.table.name)
            rows = try self.join(rows, table, slots: try kept(of: join.table, from: table.visibleSlots), named: join.table.scopeName,
                                 on: join.condition, kind: join.kind, outer: outer)
        }
        return rows
    }

    private func join(_ left: QueryRows, _ table: DataTable, slots right: [Int], named name: String, on condition: ExpressionNode,
                      kind: Join.Kind, outer: OuterRow?) throws -> QueryRows {
        // Candidate pairs: by the hash of an equality between the new table and the others when
        // there is one, every pair otherwise; the whole condition then decides each pair.
        var leftRows: [Int] = [], rightSlots: [Int] = []
        let keys = equalityKeys(condition, newTable: name)
        if let (leftKey, rightKey) = keys {
            let single = QueryRows(tables: [table], names: [name], slots: [right])
            let readRight = try compiler(self.names(single, outer)).value(rightKey)
            var index = JoinIndex(capacity: right.count)
            var sample: Value?
            // Inserted last to first, so each key's matches come out in table order.
            for position in right.indices.reversed() {
                try checkpoint(position)
                let key = try readRight(position)
                if !key.isNull {
                    index.insert(QueryKey.of(key), slot: right[position])
                    sample = key
                }
            }
            let readLeft = try compiler(self.names(left, outer)).value(leftKey)
            leftRows.reserveCapacity(left.count)
            rightSlots.reserveCapacity(left.count)
            for row in 0..<left.count {
                try checkpoint(row)
                let key = try readLeft(row)
                guard !key.isNull else { continue }
                if let right = sample {
                    // Keys of kinds that do not compare (a string and a number) fail, as comparing them pair by pair would.
                    sample = nil
                    do throws(Value.CompareFailure) {
                        _ = try Value.compare(key, right)
                    } catch {
                        throw EvaluationFailure(message: error.message, offset: condition.offsetOfOperation)
                    }
                }
                index.forEachMatch(of: QueryKey.of(key)) { slot in
                    leftRows.append(row)
                    rightSlots.append(slot)
                }
                if leftRows.count > Self.maxJoinedRows { throw tooManyRows(condition) }
            }
        } else {
            let (pairs, overflow) = left.count.multipliedReportingOverflow(by: right.count)
            if overflow || pairs > Self.maxJoinedRows { throw tooManyRows(condition) }
            for row in 0..<left.count {
                try checkpoint(row)
                for slot in right {
                    leftRows.append(row)
                    rightSlots.append(slot)
                }
            }
        }
        var joinedLeft = leftRows, joinedRight = rightSlots
        // Which left rows found a partner: a LEFT JOIN adds the others.
        var matched = [Bool](repeating: false, count: kind == .left ? left.count : 0)
        if let keys, case .binary(.equal, _, _, _) = condition, condition.sameExpression(as: .binary(.equal, keys.0, keys.1, offset: 0))
            || condition.sameExpression(as: .binary(.equal, keys.1, keys.0, offset: 0)) {
            // The hash matched on the whole condition: every candidate is a match.
            if kind == .left { for row in leftRows { matched[row] = true } }
        } else {
            let candidates = QueryRows(tables: left.tables + [table], names: left.names + [name],
                                       slots: left.keeping(leftRows).slots + [rightSlots])
            let test = try compiler(names(candidates, outer)).condition(condition)
            var kept: [Int] = []
            for index in 0..<candidates.count where try checkpoint(index) && test(index) == .yes {
                kept.append(index)
                if kind == .left { matched[leftRows[index]] = true }
            }
            joinedLeft = kept.map { leftRows[$0] }
            joinedRight = kept.map { rightSlots[$0] }
        }
        if kind == .left {
            // Rows of the left side with no partner, once each, in their order, with NULLs.
            for row in 0..<left.count where !matched[row] {
                joinedLeft.append(row)
                joinedRight.append(-1)
            }
            let order = joinedLeft.indices.sorted { (joinedLeft[$0], $0) < (joinedLeft[$1], $1) }
            joinedLeft = order.map { joinedLeft[$0] }
            joinedRight = order.map { joinedRight[$0] }
        }
        return QueryRows(tables: left.tables + [table], names: left.names + [name], slots: left.keeping(joinedLeft).slots + [joinedRight])
    }

    /// The rows of the first table that `WHERE`'s first condition selects when it is
    /// `key = value` on the table's one-field primary key, found through the key's index instead
    /// of a scan. The value is a literal, a parameter or a field of an enclosing query's row (a
    /// correlated subquery), of a kind the key compares with as Relata does. Only the first
    /// condition of an AND: on the rows it rules out nothing else would have been evaluated,
    /// so the answer — and any error — is the scan's. The whole `WHERE` still decides on the
    /// rows found. Nil when the index cannot serve.
    private func indexedSlots(_ table: DataTable, statement: SelectStatement, outer: OuterRow?) throws -> [Int]? {
        guard var first = statement.filter else { return nil }
        while case .binary(.and, let left, _, _) = first { first = left }
        guard case .binary(.equal, let left, let right, _) = first else { return nil }
        let name = statement.from.scopeName
        let local = Set(([statement.from] + statement.joins.map(\.table)).map { $0.scopeName.lowercased() })
        let keyFields = table.fields.indices.filter { table.fields[$0].primaryKey }
        guard keyFields.count == 1 else { return nil }
        let key = table.fields[keyFields[0]]
        for (fieldNode, valueNode) in [(left, right), (right, left)] {
            guard case .qualifiedField(let qualifier, let fieldName, _) = fieldNode, qualifier.equalsIgnoringCase(name),
                  fieldName.equalsIgnoringCase(key.name) else { continue }
            let value: Value
            switch valueNode {
            case .literal(let literal): value = literal
            case .parameter(let parameter, _): value = parameters[parameter] ?? .null
            case .qualifiedField(let other, _, _) where !local.contains(other.lowercased()):
                guard let outer else { continue }
                value = try outer.value(of: valueNode)
            default: continue
            }
            guard Self.indexFinds(value, in: key.type.storage) else { continue }
            return try table.index(forField: key.name).slots(for: value)
        }
        return nil
    }

    /// Whether an index (its value converted to the field's type) finds exactly the rows `=`
    /// keeps: NULL finds none, as `=` keeps none; other kinds are left to the evaluator.
    private static func indexFinds(_ value: Value, in storage: DataType.Storage) -> Bool {
        switch (value, storage) {
        case (.null, _), (.integer, .integer), (.integer, .double), (.double, .integer), (.double, .double), (.integer, .decimal),
             (.decimal, .decimal), (.string, .string), (.boolean, .boolean), (.date, .date), (.guid, .guid):
            return true
        default:
            return false
        }
    }

    /// The most rows a join may make (or pairs it may test): a query that would make more fails
    /// instead of taking the memory of the process that answers it (a data server's too).
    static let maxJoinedRows = 10_000_000

    private func tooManyRows(_ condition: ExpressionNode) -> EvaluationFailure {
        EvaluationFailure(message: "the join would make more than \(Self.maxJoinedRows / 1_000_000) million rows; narrow it with WHERE or a more selective ON",
                          offset: condition.offsetOfOperation)
    }

    /// `a = b` (alone or in an AND) with one side reading only the new table and the other
    /// only the tables before it: the keys of a hash join, left side first.
    private func equalityKeys(_ condition: ExpressionNode, newTable: String) -> (ExpressionNode, ExpressionNode)? {
        switch condition {
        case .binary(.and, let left, let right, _):
            return equalityKeys(left, newTable: newTable) ?? equalityKeys(right, newTable: newTable)
        case .binary(.equal, let left, let right, _):
            let leftNames = left.qualifiers, rightNames = right.qualifiers
            let new = newTable.lowercased()
            guard !leftNames.isEmpty, !rightNames.isEmpty, !left.hasSubquery, !right.hasSubquery else { return nil }
            if rightNames == [new], !leftNames.contains(new) { return (left, right) }
            if leftNames == [new], !rightNames.contains(new) { return (right, left) }
            return nil
        default:
            return nil
        }
    }

    // MARK: Groups

    private func groups(_ statement: SelectStatement, rows: QueryRows, names: QueryNames) throws -> QueryNames.Groups {
        let keys = try statement.groupBy.map { try compiler(names).value($0) }
        let aggregateNodes = statement.aggregates
        if keys.isEmpty, aggregateNodes.allSatisfy({ if case .aggregate(.count, nil, _, _) = $0 { true } else { false } }) {
            // Only COUNT(*) over one group: the rows are counted, not listed.
            let count = Value.integer(Int64(rows.count))
            return QueryNames.Groups(firstRows: [rows.count > 0 ? 0 : -1],
                                     aggregates: Dictionary(aggregateNodes.map { ($0.withoutPositions, [count]) }, uniquingKeysWith: { first, _ in first }))
        }
        var members: [[Int]] = []
        if keys.isEmpty {
            members = [Array(0..<rows.count)]   // one group, even of no rows
        } else if keys.count == 1 {
            // One key: no array per row.
            var index: [Value: Int] = [:]
            for row in 0..<rows.count {
                try checkpoint(row)
                let key = QueryKey.of(try keys[0](row))
                if let group = index[key] {
                    members[group].append(row)
                } else {
                    index[key] = members.count
                    members.append([row])
                }
            }
        } else {
            var index: [[Value]: Int] = [:]
            for row in 0..<rows.count {
                try checkpoint(row)
                let key = try keys.map { QueryKey.of(try $0(row)) }
                if let group = index[key] {
                    members[group].append(row)
                } else {
                    index[key] = members.count
                    members.append([row])
                }
            }
        }
        var aggregates: [ExpressionNode: [Value]] = [:]
        for case .aggregate(let function, let argument, let distinct, let offset) in aggregateNodes {
            let node = ExpressionNode.aggregate(function, argument, distinct: distinct, offset: 0).withoutPositions
            guard aggregates[node] == nil else { continue }
            let read = try argument.map { try compiler(names).value($0) }
            aggregates[node] = try members.enumerated().map { number, group in
                try checkpoint(number)
                return try Aggregate(function: function, distinct: distinct, offset: offset).value(of: group, reading: read)
            }
        }
        return QueryNames.Groups(firstRows: members.map { $0.first ?? -1 }, aggregates: aggregates)
    }

    // MARK: Helpers

    private func table(_ name: String) throws -> DataTable {
        guard let table = tables[name.lowercased()] else { throw RelataError(.unknownTable, "no table '\(name)'", table: name) }
        return table
    }

    private func names(_ rows: QueryRows, _ outer: OuterRow?) -> QueryNames {
        QueryNames(rows: rows, engine: self, outer: outer)
    }

    private func compiler(_ names: QueryNames) -> ExpressionCompiler {
        ExpressionCompiler(names: names, parameters: parameters, text: text)
    }

    private func matching(_ condition: ExpressionNode, in names: QueryNames) throws -> [Int] {
        let test = try compiler(names).condition(condition)
        return try (0..<names.rows.count).filter { try checkpoint($0) && test($0) == .yes }
    }

    /// Checks the limit every 1,024 rows of a loop; always true (so it reads in a condition).
    @discardableResult
    private func checkpoint(_ row: Int) throws -> Bool {
        if row & 1023 == 0, let limit { try limit.check() }
        return true
    }
}

extension SelectStatement {
    /// Whether the answer has one row per group: `GROUP BY`, `HAVING`, or an aggregate in the
    /// select list or `ORDER BY`.
    var isAggregate: Bool {
        !groupBy.isEmpty || having != nil || !aggregates.isEmpty
    }

    /// The aggregates of the select list, `HAVING` and `ORDER BY` (not of subqueries).
    var aggregates: [ExpressionNode] {
        var found: [ExpressionNode] = []
        var pending = columnExpressions + [having].compactMap { $0 } + orderBy.map(\.expression)
        while let node = pending.popLast() {
            if case .aggregate = node { found.append(node) } else { pending += node.children }
        }
        return found
    }
}

extension ExpressionNode {
    /// Where a binary operation stands in the text (0 for other nodes), for errors about it.
    var offsetOfOperation: Int {
        if case .binary(_, _, _, let offset) = self { return offset }
        return 0
    }

    /// The table names its qualified fields use, lowercased (not looking into subqueries).
    var qualifiers: Set<String> {
        if case .qualifiedField(let qualifier, _, _) = self { return [qualifier.lowercased()] }
        return children.reduce(into: []) { $0.formUnion($1.qualifiers) }
    }

    var hasSubquery: Bool {
        switch self {
        case .inQuery, .exists: return true
        default: return children.contains(where: \.hasSubquery)
        }
    }
}

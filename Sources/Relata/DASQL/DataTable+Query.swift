extension DataTable {
    /// A table holding the answer of a DA SQL query over in-memory tables — their current
    /// rows, pending changes included — computed as the data server computes it.
    ///
    /// ```swift
    /// let totals = try DataTable(query: DASQLQuery("""
    ///     SELECT c.ClientName, COUNT(*) AS Orders
    ///     FROM Clients c JOIN Orders o ON o.ClientId = c.ClientId
    ///     GROUP BY c.ClientName ORDER BY Orders DESC
    ///     """), over: [clients, orders])
    /// totals.rows.first?["Orders"]   // the most orders of any client
    /// ```
    ///
    /// The query reads the tables' stored fields (not calculated or lookup fields, which a
    /// database does not hold). The answer's fields are the query's columns, named as
    /// ``DASQLQuery`` describes; the table is named `Query` and has no primary key.
    ///
    /// - Throws: ``RelataError``: what the query's checks refuse (unknown tables and fields, …)
    ///   and what evaluating it fails on, with the line and column.
    public convenience init(query: DASQLQuery, parameters: [String: Value] = [:], over tables: [DataTable]) throws {
        let catalog = QueryCatalog(tables.map { QueryCatalog.Table(name: $0.name, fields: $0.fields) })
        let resolved = try query.resolved(in: catalog, parameters: parameters)
        try self.init(name: "Query", fields: resolved.fields)
        let rows = try query.rows(of: resolved, over: tables, parameters: parameters)
        if !fill(withTypedRows: rows) { try loadRows(rows) }
    }
}

extension DASQLQuery {
    /// The rows of the answer over in-memory tables, a value per column of the column's type
    /// (`4 / 2` in a float column is `2.0`): the engine every site runs (offline, in rules, and
    /// on the server for what it does not compile to SQL).
    ///
    /// With a `limit`, the engine checks it as it works (correlated subqueries included) and
    /// throws ``WorkLimit/Exceeded`` or `CancellationError`.
    package func rows(of resolved: ResolvedQuery, over tables: [DataTable], parameters: [String: Value],
                      limit: WorkLimit? = nil) throws -> [[Value]] {
        let engine = QueryEngine(tables: Dictionary(tables.map { ($0.name.lowercased(), $0) }, uniquingKeysWith: { first, _ in first }),
                                 parameters: parameters, text: text, limit: limit)
        // A field's values are of its type already; a computed column's take the column's type.
        let computed = zip(resolved.fields, resolved.statement.columnExpressions).enumerated().compactMap { index, pair -> (Int, FieldDefinition)? in
            if case .qualifiedField = pair.1 { return nil }
            return (index, pair.0)
        }
        var rows = try engine.answer(resolved.statement, outer: nil)
        guard !computed.isEmpty else { return rows }
        for row in rows.indices {
            for (column, field) in computed { rows[row][column] = try field.coerced(rows[row][column]) }
        }
        return rows
    }
}

extension ResolvedQuery {
    /// The answer's columns as fields: a computed column is read-only (it has no field to write
    /// back to), and an auto-increment field's values are plain integers there.
    package var fields: [FieldDefinition] {
        zip(columns, statement.columnExpressions).map { column, node in
            var field = FieldDefinition(column.name, column.type == .autoInc ? .integer : column.type == .largeAutoInc ? .largeInt : column.type)
            if case .qualifiedField = node {} else { field.readOnly = true }
            return field
        }
    }
}

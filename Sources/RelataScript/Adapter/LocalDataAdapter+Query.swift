import Relata

extension LocalDataAdapter {
    /// The answer of a DA SQL query over the adapter's tables, pending changes included —
    /// the same answer `SQLGetData` gives from a data server holding the same rows.
    ///
    /// ```swift
    /// let open = try adapter.table(sql: """
    ///     SELECT c.ClientName, COUNT(*) AS Orders
    ///     FROM Clients c JOIN Orders o ON o.ClientId = c.ClientId
    ///     WHERE o.Status = :status GROUP BY c.ClientName
    ///     """, parameters: ["status": "open"])
    /// ```
    ///
    /// - Throws: ``RelataError``: `querySyntax` with the line and column of a query that does
    ///   not parse; `unknownTable`/`unknownField` (with "did you mean") for names the adapter's
    ///   tables do not have; an evaluation error with its location.
    public func table(sql: String, parameters: [String: Value] = [:]) throws -> DataTable {
        try DataTable(query: DASQLQuery(sql), parameters: parameters, over: tables)
    }
}

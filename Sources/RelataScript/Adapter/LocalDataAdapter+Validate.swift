import Relata

/// A row whose pending change a rule rejects.
public struct RuleViolation {
    /// The row.
    public let row: DataTableRow
    /// What the rule said, with the script location, event, table and row.
    public let error: ScriptError
}

extension LocalDataAdapter {
    /// Runs the row rules over every pending change of a table at once, as a
    /// client does just before an apply and a server does when a delta arrives:
    /// `beforePost` then `beforeInsert` for added rows, `beforePost` then
    /// `beforeUpdate(row, old)` for modified rows, `beforeDelete` for deleted rows.
    /// As in one row's edit, each event runs in the table's script and then in the
    /// schema's before the next event runs.
    ///
    /// Each row gets its own verdict; the rows are handed to JavaScript in
    /// batches (numeric fields as shared typed arrays), so a rule set over a
    /// million changed rows runs in milliseconds rather than seconds. In a batch,
    /// `row` is a cursor with the same field access as a row object.
    ///
    /// Values the rules set are applied to the rows that pass (validated like
    /// any write); a value that does not validate makes its row a violation.
    ///
    /// ```swift
    /// for violation in try adapter.validateChanges(for: orderDetails) {
    ///     print(violation.row.label, violation.error.message)
    /// }
    /// ```
    /// - Returns: the violations, in the order the rows were first changed.
    public func validateChanges(for table: DataTable) throws -> [RuleViolation] {
        guard tables.contains(where: { $0 === table }) else { throw unknownTable(table.name) }
        data.keepsAddedRows = true
        defer { data.keepsAddedRows = false }
        return try runtime.validateChanges(for: table)
    }
}

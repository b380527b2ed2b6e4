import Relata

/// Applying changes: a ``DeltaProcessor`` over the adapter's tables (a ``TableStore``).
extension LocalDataAdapter {
    /// Applies one table's pending changes; see ``applyChanges(for:)-([DataTable])``.
    @discardableResult
    public func applyChanges(for table: DataTable) throws -> Delta {
        try applyChanges(for: [table]).first { $0.tableName == table.name }
            ?? Delta(tableName: table.name, keyFields: table.primaryKeyFields.map(\.name), loggedFields: [], changes: [])
    }

    /// Applies the pending changes of several tables in one transaction, as a data
    /// server does: see ``DeltaProcessor`` for the events, their order and the update rules.
    ///
    /// The changes that pass are committed (accepted into the tables, new rows
    /// getting real keys); a failed change stays pending with its message and its
    /// ``DeltaChange/failure``; after a rollback every change stays pending and the
    /// changes rules made through `lda` are cancelled.
    ///
    /// ```swift
    /// let deltas = try adapter.applyChanges(for: [orders, orderDetails])
    /// for change in deltas.flatMap(\.failedChanges) { print(change.failure?.location ?? "", change.message ?? "") }
    /// ```
    /// - Returns: the processed deltas, one per table that had changes.
    /// - Throws: ``RelataError`` when a table is not in the adapter or a delta
    ///   cannot be built (a new row lacks a required value); nothing is applied then.
    @discardableResult
    public func applyChanges(for tables: [DataTable]) throws -> [Delta] {
        for table in tables where !self.tables.contains(where: { $0 === table }) { throw unknownTable(table.name) }
        guard !isApplying else {
            throw RelataError(.applyInProgress, "applyChanges was called while an apply is running (from a rule?); changes made by rules join the running apply")
        }
        let deltas = try tables.map { try $0.makeDelta() }
        isApplying = true
        defer { isApplying = false }
        let processor = DeltaProcessor(runtime: runtime, updateOrder: updateOrder, updateRules: updateRules)
        return try processor.process(deltas, store: TableStore(data: data))
    }
}

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
        let processed = try runUnit(for: tables) { processor, deltas, store in try processor.process(consume deltas, store: store) }
        // Rows added and removed again matter only to a data server replaying the user's edits.
        for table in tables { table.discardVanishedChanges() }
        return processed
    }

    /// The verdicts ``applyChanges(for:)-([DataTable])`` would give, without applying
    /// anything: the delta and transaction events run up to `beforeCommit()`, foreign keys
    /// are checked, then every table is left as it was (rows unlocked, no verdict recorded,
    /// the changes rules made through `lda` cancelled). See ``DeltaProcessor/validate(_:store:)``.
    ///
    /// A client runs this just before it sends changes to a data server.
    ///
    /// ```swift
    /// let verdicts = try adapter.validateApply(for: [orders])
    /// for change in verdicts.flatMap(\.failedChanges) { print(change.changeId, change.message ?? "") }
    /// ```
    /// - Returns: the deltas as the apply would process them, every change resolved or failed.
    public func validateApply(for tables: [DataTable]) throws -> [Delta] {
        try runUnit(for: tables) { processor, deltas, store in try processor.validate(consume deltas, store: store) }
    }

    /// ``validateApply(for:)`` over deltas the caller has just built, one per table in order
    /// (`table.makeDelta()`), for a client that sends them too: they are built once.
    package func validateApply(_ deltas: [Delta], of tables: [DataTable]) throws -> [Delta] {
        guard deltas.count == tables.count else {
            throw RelataError(.invalidArgument, "validateApply was given \(deltas.count) deltas for \(tables.count) tables; it needs one per table, in the tables' order")
        }
        return try runUnit(for: tables, made: deltas) { processor, deltas, store in try processor.validate(consume deltas, store: store) }
    }

    /// Builds the tables' deltas (unless `made` has them) and runs `body` with a processor over the adapter's tables.
    private func runUnit(for tables: [DataTable], made: [Delta]? = nil,
                         _ body: (DeltaProcessor, consuming [Delta], TableStore) throws -> [Delta]) throws -> [Delta] {
        for table in tables where !self.tables.contains(where: { $0 === table }) { throw unknownTable(table.name) }
        guard !isApplying else {
            throw RelataError(.applyInProgress, "applyChanges was called while an apply is running (from a rule?); changes made by rules join the running apply")
        }
        let deltas = try tables.indices.map { index in
            let table = tables[index]
            var delta = try made?[index] ?? table.makeDelta()
            let vanished = table.vanishedChangeIds
            if !vanished.isEmpty { delta.changes.removeAll { vanished.contains($0.changeId) } }
            return delta
        }
        isApplying = true
        defer { isApplying = false }
        let processor = DeltaProcessor(runtime: runtime, updateOrder: updateOrder, updateRules: updateRules)
        return try body(processor, consume deltas, TableStore(data: data))
    }
}

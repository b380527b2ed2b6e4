import Relata

/// A ``DeltaStore`` over in-memory ``DataTable``s — the tables the changes come
/// from: a ``LocalDataAdapter`` is a ``DeltaProcessor`` over one.
///
/// Beginning locks the changed rows. Storing checks declared foreign keys (a
/// change that would leave a row without its parent fails, and so on until no
/// change would) and gives new rows real keys, as a database would: each
/// auto-increment field holding a temporary (negative) key gets the next number
/// above the table's highest. Committing folds the deltas into their tables
/// (``DataTable/accept(_:)``); rolling back leaves every change pending with its
/// message, and cancels the changes rules made through `lda`; discarding (after a
/// validation) cancels those too and leaves the other rows as they were.
///
/// ```swift
/// let data = TableDataAccess(tables: [orders, details])
/// let store = TableStore(data: data)
/// let processed = try runtime.withEnvironment(RuleEnvironment(dataAccess: data)) {
///     try DeltaProcessor(runtime: runtime).process([try orders.makeDelta(), try details.makeDelta()], store: store)
/// }
/// ```
public final class TableStore: DeltaStore {
    /// The tables; rules' writes through it join the unit of work.
    public let data: TableDataAccess
    /// The changes in the unit, so a rule's change joins it once.
    private var carried = UnitOfWorkChanges()

    /// Creates a store over the tables of `data`.
    public init(data: TableDataAccess) {
        self.data = data
    }

    public func begin(_ deltas: [Delta]) throws {
        let tables = try deltas.map(table(of:))
        data.startRecordingChanges()
        carried = UnitOfWorkChanges()
        for (delta, table) in zip(deltas, tables) {
            table.lockRows(of: delta)
            carried.carry(delta)
        }
    }

    public func changesMadeByRules() throws -> [Delta] {
        try data.deltasOfRecordedChanges(notIn: &carried)
    }

    public func store(_ deltas: inout [Delta]) throws {
        let tables = try deltas.map(table(of:))
        ForeignKeyCheck.failViolations(in: &deltas, tables: tables)
        for index in deltas.indices { assignKeys(to: &deltas[index], of: tables[index]) }
    }

    public func commit(_ deltas: [Delta]) throws {
        data.isRecordingChanges = false
        for delta in deltas {
            let table = try table(of: delta)
            try table.accept(held(delta, by: table))
        }
    }

    public func rollback(_ deltas: [Delta]) {
        undo(deltas) { table, delta in try? table.accept(delta) }
    }

    /// Leaves the tables as they were before ``begin(_:)``: rows unlocked, the changes
    /// rules made cancelled, no verdict recorded on any row.
    public func discard(_ deltas: [Delta]) {
        undo(deltas) { table, delta in table.unlockRows(of: delta) }
    }

    /// Ends the unit: `settle` the changes each table holds, and cancel those rules made.
    private func undo(_ deltas: [Delta], settle: (DataTable, Delta) -> Void) {
        data.isRecordingChanges = false
        let madeByRules = Set(data.changedRows.map(ObjectIdentifier.init))
        for delta in deltas {
            guard let table = data.table(named: delta.tableName) else { continue }
            settle(table, held(delta, by: table))
            guard !madeByRules.isEmpty else { continue }
            for row in table.changedRows where madeByRules.contains(ObjectIdentifier(row)) {
                try? table.cancelChange(for: row)
            }
        }
        data.clearChangedRows()
    }

    /// Gives the resolved new rows real keys: the next number above the table's highest.
    /// Accepting the delta then replaces the key wherever it is referenced.
    private func assignKeys(to delta: inout Delta, of table: DataTable) {
        for field in table.fields where field.autoIncrement {
            let highest: Int64? = (table.rows + table.deletedRows).compactMap { $0[field.name].integerValue }.max()
            var next: Int64? = 1
            if let highest { next = highest == Int64.max ? nil : max(highest, 0) + 1 }
            for index in delta.changes.indices where delta.changes[index].type == .insert && delta.changes[index].status == .resolved {
                guard let key = delta.changes[index].newValues[field.name]?.integerValue, key < 0 else { continue }
                guard let key = next else {
                    delta.changes[index].fail("\(table.name).\(field.name) has no key left above \(Int64.max)", kind: .constraint)
                    continue
                }
                delta.changes[index].refreshedValues[field.name] = .integer(key)
                next = key == Int64.max ? nil : key + 1
            }
        }
    }

    /// The changes of a delta that the table holds: a change refused before it reached
    /// the table (a replayed change its row rules refused) is not folded into it.
    private func held(_ delta: Delta, by table: DataTable) -> Delta {
        var held = delta
        held.keepChanges(withIdsIn: table.changeIds)
        return held
    }

    private func table(of delta: Delta) throws -> DataTable {
        guard let table = data.table(named: delta.tableName) else {
            throw RelataError(.unknownTable, "the store has no table '\(delta.tableName)'", table: delta.tableName)
        }
        return table
    }

}

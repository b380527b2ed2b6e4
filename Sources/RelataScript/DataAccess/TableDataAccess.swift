import Relata

/// `lda` over in-memory ``DataTable``s: what a ``LocalDataAdapter`` gives its rules,
/// and what a test gives rules it runs without an adapter.
///
/// Writes go through the target table's rules. Rows changed while
/// ``isRecordingChanges`` is on are kept in ``changedRows``, so an apply
/// processes them with the changes that caused them.
///
/// ```swift
/// let data = TableDataAccess(tables: [clients, orders])
/// try runtime.withEnvironment(RuleEnvironment(dataAccess: data)) { … }
/// ```
public final class TableDataAccess: RuleDataAccess {
    /// The tables, in the order they were added.
    public private(set) var tables: [DataTable]
    /// Whether writes are recorded in ``changedRows``.
    public var isRecordingChanges = false
    /// The rows rules changed while ``isRecordingChanges`` was on, in the order they changed.
    public private(set) var changedRows: [DataTableRow] = []
    /// While true, `lda.remove` refuses rows added locally: a pass over a table's changes
    /// (``LocalDataAdapter/validateChanges(for:)``) must keep its rows in their table.
    public var keepsAddedRows = false
    /// Runs before `lda` reads a table (`select`, `selectWhere`); throwing fails the read.
    /// A client sets it to fetch a table it holds but has not loaded yet, so a rule reads
    /// what the server would.
    public var beforeRead: ((DataTable) throws -> Void)?

    /// Creates data access over tables.
    public init(tables: [DataTable] = []) {
        self.tables = tables
    }

    /// Adds a table.
    public func add(_ table: DataTable) { tables.append(table) }

    /// Removes the table that was added last (an adapter undoing a failed add).
    public func removeLast() { tables.removeLast() }

    /// Forgets the recorded rows.
    public func clearChangedRows() { changedRows = [] }

    /// Forgets the recorded rows and records from now on: a unit of work begins.
    public func startRecordingChanges() {
        changedRows = []
        isRecordingChanges = true
    }

    /// The deltas of the recorded changes that `carried` does not hold yet: their rows are
    /// locked and their ids added to `carried`, so a rule's change joins a unit of work once.
    public func deltasOfRecordedChanges(notIn carried: inout UnitOfWorkChanges) throws -> [Delta] {
        var result: [Delta] = []
        var seenTables: [DataTable] = []
        for row in changedRows where !seenTables.contains(where: { $0 === row.table }) { seenTables.append(row.table) }
        for table in seenTables {
            var delta = try table.makeDelta()
            let wanted = Set(changedRows.filter { $0.table === table }.map(\.changeId))
            let known = carried.ids(ofTable: table.name)
            delta.changes = delta.changes.filter { wanted.contains($0.changeId) && !known.contains($0.changeId) }
            guard !delta.changes.isEmpty else { continue }
            table.lockRows(of: delta)
            carried.carry(delta)
            result.append(delta)
        }
        return result
    }

    /// The table with a name (case-insensitive), or nil.
    public func table(named name: String) -> DataTable? {
        tables.first { $0.name.equalsIgnoringCase(name) }
    }

    public var tableNames: [String] { tables.map(\.name) }

    public func fields(ofTable name: String) -> [FieldDefinition]? { table(named: name)?.fields }

    public func row(in table: String, key: [Value]) throws -> DataTableRow? {
        try readable(table).row(forPrimaryKey: key)
    }

    public func rows(in table: String, where expression: String, parameters: [String: Value]) throws -> [DataTableRow] {
        try readable(table).rows(where: expression, parameters: parameters)
    }

    public func answer(sql: String, parameters: [String: Value]) throws -> DataTable {
        let query = try DASQLQuery(sql)
        return try DataTable(query: query, parameters: parameters, over: query.tableNames.map { try readable($0) })
    }

    public func insert(into table: String, values: [String: Value]) throws -> DataTableRow {
        let row = try existing(table).addNewRow(values: values)
        record(row)
        return row
    }

    public func update(_ row: DataTableRow, values: [String: Value]) throws {
        try row.setValues(values)
        record(row)
    }

    public func remove(_ row: DataTableRow) throws {
        if keepsAddedRows && (row.rowState == .added || row.rowState == .addedInEditMode) {
            throw ScriptError(.runtime, "lda.remove cannot take a row added locally out of its table while validateChanges runs; cancel it afterwards")
        }
        try row.table.removeRow(row)
        record(row)
    }

    private func record(_ row: DataTableRow) {
        if isRecordingChanges { changedRows.append(row) }
    }

    private func readable(_ name: String) throws -> DataTable {
        let table = try existing(name)
        try beforeRead?(table)
        return table
    }

    private func existing(_ name: String) throws -> DataTable {
        guard let table = table(named: name) else {
            throw RelataError(.unknownTable, "there is no table '\(name)' (tables: \(tableNames.joined(separator: ", ")))", table: name)
        }
        return table
    }
}

/// The changes a unit of work carries, by table (case-insensitive) and change id, so a change
/// joins it once.
///
/// ```swift
/// var carried = UnitOfWorkChanges()
/// carried.carry(delta)
/// carried.ids(ofTable: "orders").contains(3)
/// ```
public struct UnitOfWorkChanges: Sendable {
    /// Change ids by table name folded to lower case.
    private var idsByTable: [String: Set<Int>] = [:]

    /// No change carried.
    public init() {}

    /// Adds a delta's changes.
    public mutating func carry(_ delta: Delta) {
        idsByTable[delta.tableName.lowercased(), default: []].formUnion(delta.changes.indices.lazy.map { delta.changes[$0].changeId })   // each id read in place
    }

    /// The ids of the changes the unit carries of a table (named in any case).
    public func ids(ofTable table: String) -> Set<Int> {
        idsByTable[table.lowercased()] ?? []
    }
}

import Foundation
import Logging
import Relata

/// Tables held locally — loaded from memory, CSV or JSON — with their business
/// rules in JavaScript, applied the way a data server applies them.
///
/// ```swift
/// let adapter = try LocalDataAdapter()
/// let details = try adapter.addTable(name: "OrderDetails", fields: fields, csv: csvText,
///                                    script: RuleScript(contentsOf: rulesFolder.appendingPathComponent("OrderDetails.js")))
/// try details.rows[0].setValue(0, forKey: "Quantity")   // beforePost runs; fail() throws a ScriptError
/// let processed = try adapter.applyChanges(for: details) // delta events, then commit
/// ```
///
/// Row events run as rows change: `onNewRow` when a row is added,
/// `beforePost` then `beforeInsert` or `beforeUpdate(row, old)` when a change is
/// posted (a direct change outside edit mode is posted at once), and
/// `beforeDelete` when a row is removed. A `fail(message)` there throws a
/// ``ScriptError`` of kind ``ScriptError/Kind/ruleFailed`` with the script
/// location, and the row stays exactly as it was.
///
/// An adapter, its tables and its engine belong to one thread.
public final class LocalDataAdapter {
    /// The engine the rules run on.
    public let engine: ScriptEngine
    /// The tables, in the order they were added.
    public private(set) var tables: [DataTable] = []
    /// Whether scripts see `isServer` as true (a data server sets it; local use leaves it false).
    public var isServer = false {
        didSet { host.refreshGlobals() }
    }
    /// The session scripts see as `session`.
    public var session = Session() {
        didSet { host.refreshGlobals() }
    }
    /// The rule errors that failed changes in the latest apply, by table (lower case) and change id.
    var applyErrors: [String: [Int: ScriptError]] = [:]
    /// Why each change failed in the latest apply, by table (lower case) and change id.
    var applyFailureKinds: [String: [Int: FailureKind]] = [:]
    /// Records which script functions and `fail(…)` calls run (`relata test --coverage`).
    /// Set it before scripts are loaded: scripts loaded earlier are not followed.
    public var coverage: RuleCoverage?
    /// The order in which an apply processes tables (names); tables not listed follow in the order they were added.
    public var updateOrder: [String] = []

    private var updateRules: [String: UpdateRule] = [:]
    private(set) var host: RuleHost!
    /// Rows changed through `lda` while an apply runs.
    var scriptChanges: [DataTableRow] = []
    var isApplying = false
    /// True while `validateChanges` runs: its row sets must keep their rows.
    var isValidating = false

    /// Creates an adapter with no tables.
    ///
    /// - Parameters:
    ///   - engine: the engine to run rules on; a new one (1 s CPU limit per call) by default.
    ///   - logger: where `log(...)` in scripts writes.
    public init(engine: ScriptEngine? = nil, logger: Logger = Logger(label: "relata.rules")) throws {
        self.engine = try engine ?? ScriptEngine()
        host = RuleHost(engine: self.engine, logger: logger, adapter: self)
    }

    deinit {
        // Tables the program keeps stop consulting rules whose adapter is gone.
        for table in tables where table.rules is TableRules { table.rules = nil }
    }

    /// The table with a name (case-insensitive), or nil.
    public func table(named name: String) -> DataTable? {
        tables.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }
    }

    /// Adds a table, with its rule script if it has one.
    ///
    /// - Throws: ``RelataError/Code/invalidDefinition`` when a table with that name is
    ///   already there; ``ScriptError`` when the script does not compile or its top level throws.
    @discardableResult
    public func addTable(_ table: DataTable, script: RuleScript? = nil) throws -> DataTable {
        if self.table(named: table.name) != nil {
            throw RelataError(.invalidDefinition, "the adapter already has a table with this name", table: table.name)
        }
        tables.append(table)
        do {
            if let script { try host.load(script, table: table.name) }
        } catch {
            tables.removeLast()
            throw error
        }
        host.refreshGlobals()
        connectRules()
        return table
    }

    /// Loads a table from CSV (see ``DataTable/init(name:fields:csv:)``) and adds it.
    @discardableResult
    public func addTable(name: String, fields: [FieldDefinition], csv: String, script: RuleScript? = nil) throws -> DataTable {
        try addTable(DataTable(name: name, fields: fields, csv: csv), script: script)
    }

    /// Loads a table from JSON (see ``DataTable/init(name:fields:json:)``) and adds it.
    @discardableResult
    public func addTable(name: String, fields: [FieldDefinition], json: Data, script: RuleScript? = nil) throws -> DataTable {
        try addTable(DataTable(name: name, fields: fields, json: json), script: script)
    }

    /// Sets (or replaces) the rule script of a table already in the adapter.
    public func setScript(_ script: RuleScript, forTable name: String) throws {
        guard let table = table(named: name) else { throw unknownTable(name) }
        try host.load(script, table: table.name)
        connectRules()
    }

    /// Sets (or replaces) the schema-wide script: its handlers run for every table,
    /// after the table's own handler of the same name.
    public func setSchemaScript(_ script: RuleScript) throws {
        try host.load(script, table: nil)
        connectRules()
    }

    /// Sets how an apply treats a table's failed changes.
    public func setUpdateRule(_ rule: UpdateRule, forTable name: String) {
        updateRules[name.lowercased()] = rule
    }

    /// The update rule of a table (``UpdateRule/FailureBehavior/applyOthers`` unless set).
    public func updateRule(forTable name: String) -> UpdateRule {
        updateRules[name.lowercased()] ?? UpdateRule()
    }

    /// Adds a calculated field whose value a JavaScript function of the row computes.
    ///
    /// `function` is either the name of a function in the table's script or a
    /// function expression:
    ///
    /// ```swift
    /// try adapter.addCalculatedField(name: "Total", type: .currency, table: "OrderDetails",
    ///                                function: "function (row) { return row.Quantity * row.UnitPrice }")
    /// try adapter.addCalculatedField(name: "Total", type: .currency, table: "OrderDetails", function: "lineTotal")
    /// ```
    public func addCalculatedField(name: String, type: DataType, cached: Bool = false, table tableName: String,
                                   function: String) throws {
        guard let table = table(named: tableName) else { throw unknownTable(tableName) }
        let host = self.host!
        let compiled = try host.calculationFunction(function, table: table.name, field: name)
        try table.addCalculatedField(name: name, type: type, cached: cached, compute: { row in
            try host.calculate(compiled, row: row, field: name)
        }, computeMany: { [unowned table] rows in
            try host.mapBatch(compiled, table: table, rows: rows, type: type, field: name)
        })
    }

    /// Rows changed through `lda` join the apply in progress.
    func didChangeThroughScript(_ row: DataTableRow) {
        if isApplying { scriptChanges.append(row) }
    }

    func unknownTable(_ name: String) -> RelataError {
        RelataError(.unknownTable, "the adapter has no table '\(name)' (tables: \(tables.map(\.name).joined(separator: ", ")))",
                    table: name)
    }

    /// Gives every table whose scripts handle a row event the rule hook.
    private func connectRules() {
        for table in tables {
            let needed = RuleEvent.rowEvents.contains { host.handles($0, table: table.name) }
            if needed, !(table.rules is TableRules) {
                table.rules = TableRules(host: host, tableName: table.name)
            } else if !needed, table.rules is TableRules {
                table.rules = nil
            }
        }
    }
}

@available(*, unavailable, message: "A LocalDataAdapter belongs to one thread, with its tables and engine.")
extension LocalDataAdapter: Sendable {}

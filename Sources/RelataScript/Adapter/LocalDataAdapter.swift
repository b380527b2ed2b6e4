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
/// An adapter, its tables and its engine are used from one place at a time (a thread,
/// or one actor); they are not `Sendable`.
public final class LocalDataAdapter {
    /// The rules: the engine and the compiled scripts, seeing this adapter's tables through `lda`.
    public let runtime: RuleRuntime
    /// The engine the rules run on.
    public var engine: ScriptEngine { runtime.engine }
    /// The tables as the rules reach them (`lda`), and as an apply stores into them.
    public let data = TableDataAccess()
    /// The tables, in the order they were added.
    public var tables: [DataTable] { data.tables }
    /// Whether scripts see `isServer` as true (a data server sets it; local use leaves it false).
    public var isServer = false {
        didSet { updateEnvironment() }
    }
    /// The session scripts see as `session`.
    public var session = Session() {
        didSet { updateEnvironment() }
    }
    /// Records which script functions and `fail(…)` calls run (`relata test --coverage`).
    /// Set it before scripts are loaded: scripts loaded earlier are not followed.
    public var coverage: RuleCoverage? {
        get { runtime.coverage }
        set { runtime.coverage = newValue }
    }
    /// The order in which an apply processes tables (names); tables not listed follow in the order they were added.
    public var updateOrder: [String] = []

    private(set) var updateRules: [String: UpdateRule] = [:]
    var host: RuleRuntime { runtime }
    var isApplying = false

    /// Creates an adapter with no tables.
    ///
    /// - Parameters:
    ///   - engine: the engine to run rules on; a new one (1 s CPU limit per call) by default.
    ///   - logger: where `log(...)` in scripts writes.
    public init(engine: ScriptEngine? = nil, logger: Logger = Logger(label: "relata.rules")) throws {
        runtime = try RuleRuntime(engine: engine, logger: logger)
        updateEnvironment()
    }

    deinit {
        // Tables the program keeps stop consulting rules whose adapter is gone; their calculated
        // fields keep the runtime, which must then no longer hold the tables (through `lda`).
        runtime.detachRules(from: tables)
        runtime.setEnvironment(RuleEnvironment(session: session, isServer: isServer))
    }

    /// The rules see this adapter's session, `isServer` and tables.
    private func updateEnvironment() {
        runtime.setEnvironment(RuleEnvironment(session: session, isServer: isServer, dataAccess: data))
    }

    /// The table with a name (case-insensitive), or nil.
    public func table(named name: String) -> DataTable? {
        data.table(named: name)
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
        data.add(table)
        do {
            if let script { try host.load(script, table: table.name) }
        } catch {
            data.removeLast()
            throw error
        }
        updateEnvironment()
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

    /// Sets (or replaces) a server-only script — a table's, or the schema-wide one (`nil`) — for
    /// an adapter that keeps the data itself, as a data server does: it runs after the shared
    /// script of the same place. (A ``RemoteDataAdapter``'s rules never have one: servers do not
    /// send them.)
    ///
    /// ```swift
    /// try adapter.setServerScript(RuleScript(pricingJS, fileName: "Orders.server.js"), forTable: "Orders")
    /// ```
    public func setServerScript(_ script: RuleScript, forTable name: String?) throws {
        if let name, table(named: name) == nil { throw unknownTable(name) }
        try host.load(script, table: name.flatMap { table(named: $0)?.name }, serverOnly: true)
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
        try runtime.addCalculatedField(name: name, type: type, cached: cached, to: table, function: function)
    }

    package func unknownTable(_ name: String) -> RelataError {
        RelataError(.unknownTable, "the adapter has no table '\(name)' (tables: \(tables.map(\.name).joined(separator: ", ")))",
                    table: name)
    }

    /// Gives every table whose scripts handle a row event the rule hook.
    private func connectRules() {
        runtime.attachRules(to: tables)
    }
}

@available(*, unavailable, message: "A LocalDataAdapter is used from one place at a time, with its tables and engine.")
extension LocalDataAdapter: Sendable {}

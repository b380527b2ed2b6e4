internal import CJavaScriptCore
import Foundation
import Logging
import Relata

/// The rule runtime: one ``ScriptEngine`` plus the compiled rule scripts of one
/// schema — a script per table and an optional schema-wide script, each in its
/// own global scope. Handlers are top-level functions found by name; a missing
/// handler is skipped.
///
/// Every site runs rules through a runtime: a ``LocalDataAdapter`` owns one and
/// installs it as each table's ``DataTableRules``; a ``DeltaProcessor`` calls its
/// delta and transaction events; a data server keeps a ``RuleRuntimePool`` of them.
/// What the rules see as `session`, `isServer` and `lda` is the runtime's
/// ``environment``, set by whoever runs a unit of work (``withEnvironment(_:_:)``).
///
/// ```swift
/// let runtime = try RuleRuntime()
/// try runtime.load(RuleScript(source: "function beforeProcessDeltaChange(d, c) { if (!isServer) fail('server only') }",
///                             fileName: "Orders.js"), forTable: "Orders")
/// try runtime.withEnvironment(RuleEnvironment(session: Session(roles: ["Sales"]), isServer: true, dataAccess: tables)) {
///     try DeltaProcessor(runtime: runtime).process(deltas, store: store)
/// }
/// ```
///
/// A runtime, like its engine, is used by one thread at a time; a
/// ``RuleRuntimeOwner`` gives it a home that any task can reach.
public final class RuleRuntime {
    /// The engine the rules run on.
    public let engine: ScriptEngine
    /// Where `log(…)` in scripts writes.
    public let logger: Logger
    /// Records which script functions and `fail(…)` calls run (`relata test --coverage`).
    /// Set it before scripts are loaded: scripts loaded earlier are not followed.
    public var coverage: RuleCoverage?
    /// What the rules see as `session`, `isServer` and `lda` right now.
    public private(set) var environment = RuleEnvironment()
    /// Table scripts by table name (folded to lower case).
    private(set) var tableScripts: [String: CompiledScript] = [:]
    private(set) var schemaScript: CompiledScript?
    /// Server-only scripts (``Relata/TableDefinition/serverScript``), by table name (lower case).
    private(set) var serverTableScripts: [String: CompiledScript] = [:]
    private(set) var serverSchemaScript: CompiledScript?
    /// Shared arrays reused between batch runs.
    let sharedArrays = SharedArrayPool()
    /// ``handlers(of:table:)``'s answers, forgotten whenever a script is loaded.
    private var handlerCache: [HandlerKey: [(CompiledScript, JSObjectRef)]] = [:]
    /// ``allScripts``, forgotten whenever a script is loaded.
    private var allScriptsCache: [CompiledScript]?
    /// How many scripts were loaded: handler lists found before a load are stale after it.
    private(set) var loads = 0
    private var madeBack: BackReference<RuleRuntime>?

    /// How tables' rule hooks and calculated fields reach the runtime without keeping it alive:
    /// a table may outlive its adapter.
    var back: BackReference<RuleRuntime> { BackReference.kept(in: &madeBack, to: self) }
    private struct HandlerKey: Hashable {
        var event: RuleEvent
        var table: String?
    }

    /// Creates a runtime with no scripts.
    ///
    /// - Parameters:
    ///   - engine: the engine to run rules on; a new one (1 s CPU limit per call) by default.
    ///   - logger: where `log(...)` in scripts writes.
    public init(engine: ScriptEngine? = nil, logger: Logger = Logger(label: "relata.rules")) throws {
        self.engine = try engine ?? ScriptEngine()
        self.logger = logger
    }

    deinit {
        madeBack?.end()
    }

    /// Makes `environment` what the rules see from now on (an owner of standing
    /// rules, such as a ``LocalDataAdapter``, sets it once and when it changes).
    public func setEnvironment(_ environment: RuleEnvironment) {
        self.environment = environment
        if environment.session != installedGlobals.session || environment.isServer != installedGlobals.isServer {
            for script in allScripts { installSession(in: script.context) }
            installedGlobals.session = environment.session
            installedGlobals.isServer = environment.isServer
        }
        // Without data the rules cannot run a unit of work, so they keep the schema they were shown
        // (a data server's runtime goes back to no data between requests, and comes back with the same tables).
        if let tables = environment.dataAccess?.tableNames, tables != installedGlobals.tables {
            for script in allScripts { installSchema(in: script) }
            installedGlobals.tables = tables
        }
    }

    /// What the scripts' `session`, `isServer` and `schema` globals were last built from.
    private struct InstalledGlobals {
        var session = Session()
        var isServer = false
        var tables: [String] = []
    }
    private var installedGlobals = InstalledGlobals()

    /// Runs `body` — a unit of work: an apply, a validation — with the rules seeing
    /// `environment`; the previous environment is back afterwards.
    ///
    /// ```swift
    /// try runtime.withEnvironment(RuleEnvironment(session: login.session, isServer: true, dataAccess: database)) {
    ///     try processor.process(deltas, store: database)
    /// }
    /// ```
    public func withEnvironment<Result>(_ environment: RuleEnvironment, _ body: () throws -> Result) rethrows -> Result {
        let previous = self.environment
        setEnvironment(environment)
        defer { setEnvironment(previous) }
        return try body()
    }

    /// Runs `body` — a unit of work — with the rules seeing `environment`, on a runtime that runs
    /// nothing but units of work, each with its own environment (a data server's pooled runtimes).
    /// Afterwards the environment's data is gone, as with ``withEnvironment(_:_:)``, but its
    /// session stays installed: no rule runs before the next unit sets its own, and the same
    /// user's next request then changes nothing in the scripts' globals.
    ///
    /// ```swift
    /// try pool.perform { runtime in
    ///     try runtime.withUnitEnvironment(RuleEnvironment(session: session, isServer: true, dataAccess: data)) {
    ///         try processor.process(deltas, store: store)
    ///     }
    /// }
    /// ```
    public func withUnitEnvironment<Result>(_ environment: RuleEnvironment, _ body: () throws -> Result) rethrows -> Result {
        setEnvironment(environment)
        defer { setEnvironment(RuleEnvironment(session: environment.session, isServer: environment.isServer)) }
        return try body()
    }

    /// Compiles a table's rule script (replacing the one it had) and runs its top level.
    ///
    /// - Throws: ``ScriptError`` when the script does not compile or its top level throws;
    ///   the table keeps its previous script then.
    public func load(_ script: RuleScript, forTable table: String) throws {
        try load(script, table: table)
    }

    /// Compiles the schema-wide script, whose handlers run for every table after the table's own.
    public func loadSchemaScript(_ script: RuleScript) throws {
        try load(script, table: nil)
    }

    /// Compiles a server-only script: a table's (`table`), or the schema-wide one (nil). A table's
    /// runs right after the table's shared script; the schema-wide one after the shared schema-wide
    /// script. Only the sites that keep the data load them (a data server, a ``LocalDataAdapter``
    /// made from the schema); clients never receive them.
    public func loadServerScript(_ script: RuleScript, forTable table: String?) throws {
        try load(script, table: table, serverOnly: true)
    }

    /// Compiles every script of a schema: the schema-wide one, then each table's — a
    /// server's runtimes are made this way, one per ``RuleRuntimePool`` slot.
    ///
    /// ```swift
    /// let pool = try RuleRuntimePool(size: 4) {
    ///     let runtime = try RuleRuntime()
    ///     try runtime.load(schema)
    ///     return runtime
    /// }
    /// ```
    public func load(_ schema: SchemaDefinition) throws {
        if let script = schema.script { try loadSchemaScript(script) }
        if let script = schema.serverScript { try loadServerScript(script, forTable: nil) }
        for table in schema.tables {
            if let script = table.script { try load(script, forTable: table.name) }
            if let script = table.serverScript { try loadServerScript(script, forTable: table.name) }
        }
        for command in schema.commands where commandScript(for: command) == nil {
            throw ScriptError(.runtime, "the command \(command.name) names the function \(command.function), which the schema-wide scripts do not define",
                              file: (schema.serverScript ?? schema.script)?.fileName)
        }
    }

    /// The schema-wide script defining a command's function: the server-only one first.
    func commandScript(for command: CommandDefinition) -> CompiledScript? {
        [serverSchemaScript, schemaScript].compactMap { $0 }.first { $0.handler(command.function) != nil }
    }

    /// True when the global scope of `table`'s script has `name` (tooling checks what scripts see).
    package func scriptScope(ofTable table: String, hasGlobal name: String) -> Bool {
        script(forTable: table)?.context.hasGlobal(name) ?? false
    }

    /// True when a script of `table` (or the schema-wide script) handles `event`.
    public func handles(_ event: RuleEvent, forTable table: String) -> Bool {
        handles(event, table: table)
    }

    /// A script compiled into its own global scope.
    final class CompiledScript {
        let script: RuleScript
        let context: ScriptContext
        let table: String?
        /// Handlers looked up once per name (nil: the script has none).
        private var handlers: [String: JSObjectRef?] = [:]
        /// The `schema` objects this scope was shown, by the tables they describe (protected), so
        /// units of work that alternate between environments do not build them again each time.
        var schemaObjects: [[String]: JSObjectRef] = [:]

        init(script: RuleScript, context: ScriptContext, table: String?) {
            self.script = script
            self.context = context
            self.table = table
        }

        deinit {
            for object in schemaObjects.values { JSValueUnprotect(context.ref, object) }
        }

        /// Where the script calls `fail(`, found once, so a refusal is located at its call
        /// the same way in errors and in coverage.
        private(set) lazy var failCalls = ScriptScanner(script.source).failCalls

        /// A refusal located at the start of its `fail(` call (JavaScriptCore's stack points inside
        /// the call); the call site is the last one on the line at or before the reported column.
        func locatingFailCall(_ error: ScriptError) -> ScriptError {
            guard error.kind == .ruleFailed, error.file == script.fileName, let line = error.line, let column = error.column else { return error }
            let onLine = failCalls.filter { $0.line == line }
            guard let site = onLine.last(where: { $0.column <= column }) ?? onLine.first else { return error }
            var located = error
            located.column = site.column
            return located
        }

        func handler(_ name: String) -> JSObjectRef? {
            if let known = handlers[name] { return known }
            let found = context.optionalGlobalFunction(named: name)
            if let found { context.protect(found) }
            handlers[name] = found
            return found
        }
    }

    /// Compiles and runs a script's top level in a new scope; syntax and top-level errors are thrown here.
    func load(_ script: RuleScript, table: String?, serverOnly: Bool = false) throws {
        let context = try ScriptContext(machine: engine.machine)
        let compiled = CompiledScript(script: script, context: context, table: table)
        try installGlobals(in: context, table: table)
        installSchema(in: compiled)
        installedGlobals.tables = environment.dataAccess?.tableNames ?? []   // what the new scope was shown
        if let coverage { try instrumentFailures(context, for: coverage, script: script) }
        _ = try context.evaluate(script.source, fileName: script.fileName, line: 1)
        if let coverage { try instrument(context, for: coverage, script: script) }
        sharedArrays.removeAll()
        handlerCache.removeAll()
        loads += 1
        allScriptsCache = nil
        // The scope a script replaces lives on while anything still holds it (a calculated
        // field compiled there, a cursor); every JavaScriptCore resource is freed by its owner.
        switch (table, serverOnly) {
        case (let table?, false): tableScripts[table.lowercased()] = compiled
        case (let table?, true): serverTableScripts[table.lowercased()] = compiled
        case (nil, false): schemaScript = compiled
        case (nil, true): serverSchemaScript = compiled
        }
    }

    /// A table's shared script: the scope of its calculated fields.
    func script(forTable table: String) -> CompiledScript? { tableScripts[table.lowercased()] }

    /// A table's own scripts: the shared one, then the server-only one.
    func ownScripts(forTable table: String) -> [CompiledScript] {
        [tableScripts[table.lowercased()], serverTableScripts[table.lowercased()]].compactMap { $0 }
    }

    /// The schema-wide scripts: the shared one, then the server-only one.
    var schemaScripts: [CompiledScript] { [schemaScript, serverSchemaScript].compactMap { $0 } }

    /// What `lda` reaches, or an error naming the call when the rules run where there is no data.
    func dataAccess(for function: String) throws -> any RuleDataAccess {
        guard let dataAccess = environment.dataAccess else {
            throw ScriptError(.runtime, "lda.\(function): these rules run without data (no data access in their environment)")
        }
        return dataAccess
    }

    /// The scripts that handle events of a table: its own scripts, then the schema-wide ones
    /// (each shared, then server-only).
    func scripts(forTable table: String?) -> [CompiledScript] {
        (table.map(ownScripts(forTable:)) ?? []) + schemaScripts
    }

    /// Every script, schema-wide first (for transaction events).
    var allScripts: [CompiledScript] {
        if let known = allScriptsCache { return known }
        let all = schemaScripts + Set(tableScripts.keys).union(serverTableScripts.keys).sorted().flatMap(ownScripts(forTable:))
        allScriptsCache = all
        return all
    }

    /// Calls `event` in each script of a table that defines it, with arguments built
    /// in that script's scope. Errors carry the event, table and row.
    func fire(_ event: RuleEvent, table: String?, row: @autoclosure () -> String? = nil,
              arguments: (ScriptContext, inout RootedValues) throws -> Void) throws {
        try fire(event, handlers: handlers(of: event, table: table), table: table, row: row(), arguments: arguments)
    }

    /// Calls handlers found by ``handlers(of:table:)`` (since the last load), in order.
    func fire(_ event: RuleEvent, handlers: [(CompiledScript, JSObjectRef)], table: String?, row: @autoclosure () -> String? = nil,
              arguments: (ScriptContext, inout RootedValues) throws -> Void) throws {
        for (script, handler) in handlers {
            try fire(event, in: script, handler: handler, table: table, row: row(), arguments: arguments)
        }
    }

    func fire(_ event: RuleEvent, in script: CompiledScript, table: String?, row: @autoclosure () -> String? = nil,
              arguments: (ScriptContext, inout RootedValues) throws -> Void) throws {
        guard let handler = script.handler(event.handlerName) else { return }
        try fire(event, in: script, handler: handler, table: table, row: row(), arguments: arguments)
    }

    /// The scripts of a table that handle `event`, with their handlers, in the order they run:
    /// worked out once per table and event until a script is loaded (a row's edit fires twice).
    func handlers(of event: RuleEvent, table: String?) -> [(CompiledScript, JSObjectRef)] {
        let key = HandlerKey(event: event, table: table)
        if let known = handlerCache[key] { return known }
        let found = scripts(forTable: table).compactMap { script in script.handler(event.handlerName).map { (script, $0) } }
        handlerCache[key] = found
        return found
    }

    private func fire(_ event: RuleEvent, in script: CompiledScript, handler: JSObjectRef, table: String?, row: @autoclosure () -> String?,
                      arguments: (ScriptContext, inout RootedValues) throws -> Void) throws {
        do {
            // What the handler writes is the rules' work, never the user's edits (``RuleScope``).
            let returned = try RuleScope.run { try script.context.call(handler) { try arguments(script.context, &$0) } }
            if script.context.isPromise(returned) { throw Self.asyncHandler(event.handlerName) }
        } catch let thrown as ScriptError {
            throw located(thrown, event: event, in: script, table: table, row: row())
        }
    }

    /// An error a handler threw, with its event, table, row and script, and a refusal located at its `fail(` call.
    func located(_ thrown: ScriptError, event: RuleEvent, in script: CompiledScript, table: String?, row: String?) -> ScriptError {
        var error = script.locatingFailCall(thrown)
        error.event = event.handlerName
        error.table = error.table ?? table
        error.row = error.row ?? row
        if error.file == nil { error.file = script.script.fileName }
        return error
    }

    /// The error for a handler that returned a promise: its `fail()` would be lost, so it is refused.
    static func asyncHandler(_ event: String) -> ScriptError {
        ScriptError(.runtime, "\(event) returned a promise; rule handlers run synchronously (remove async and await)")
    }

    /// True when any script defines the handler (so callers can skip building arguments).
    func handles(_ event: RuleEvent, table: String?) -> Bool {
        !handlers(of: event, table: table).isEmpty
    }
}

/// Connects one table to the rule host: the row events of ``DataTableRules``.
final class TableRules: DataTableRules {
    /// Not kept alive: the adapter owns the runtime, and a table may outlive its adapter.
    private let back: BackReference<RuleRuntime>
    var host: RuleRuntime? { back.object }
    let tableName: String
    /// The table's handlers by event, as the host found them after its `handlersLoads`-th load:
    /// a row's edit fires two events, and the host's own cache would hash the table's name each
    /// time. A list, not a dictionary: there are five row events, quicker compared than hashed.
    private var handlersByEvent: [(event: RuleEvent, handlers: [(RuleRuntime.CompiledScript, JSObjectRef)])] = []
    private var handlersLoads = -1

    init(host: RuleRuntime, tableName: String) {
        back = host.back
        self.tableName = tableName
    }

    func rowDidAdd(_ row: DataTableRow) throws {
        try fire(.onNewRow, row)
    }

    /// The batch's rule calls nested in one entry into JavaScript (``VirtualMachine/entered(in:_:)``).
    func runBatch<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        guard let engine = host?.engine else { return try body() }
        return try engine.machine.entered(in: engine.context, body)
    }

    func rowWillPost(_ row: DataTableRow, inserting: Bool) throws {
        try fire(.beforePost, row)
        if inserting {
            try fire(.beforeInsert, row)
        } else {
            try fire(.beforeUpdate, row) { context, arguments in
                arguments.append(RowObject.make(row, in: context))
                arguments.append(OriginalValuesObject.make(row, in: context))
            }
        }
    }

    func rowWillRemove(_ row: DataTableRow) throws {
        try fire(.beforeDelete, row)
    }

    private func fire(_ event: RuleEvent, _ row: DataTableRow) throws {
        try fire(event, row) { $1.append(RowObject.make(row, in: $0)) }
    }

    private func fire(_ event: RuleEvent, _ row: DataTableRow, arguments: (ScriptContext, inout RootedValues) throws -> Void) throws {
        let host = try liveHost()
        if handlersLoads != host.loads {
            handlersByEvent = []
            handlersLoads = host.loads
        }
        let handlers: [(RuleRuntime.CompiledScript, JSObjectRef)]
        if let known = handlersByEvent.first(where: { $0.event == event }) {
            handlers = known.handlers
        } else {
            handlers = host.handlers(of: event, table: tableName)
            handlersByEvent.append((event, handlers))
        }
        try host.fire(event, handlers: handlers, table: tableName, row: row.label, arguments: arguments)
    }

    private func liveHost() throws -> RuleRuntime {
        guard let host else { throw ScriptError(.runtime, "the rules of table \(tableName) were unloaded with their adapter", table: tableName) }
        return host
    }
}

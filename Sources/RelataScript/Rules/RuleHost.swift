internal import CJavaScriptCore
import Foundation
import Logging
import Relata

/// Runs rule scripts: one per table plus an optional schema-wide script, each
/// in its own global scope of one ``ScriptEngine``. Handlers are top-level
/// functions found by name; a missing handler is skipped.
///
/// The ``LocalDataAdapter`` owns one; it installs itself as each table's
/// ``DataTableRules`` and calls the delta and transaction events while applying.
final class RuleHost {
    let engine: ScriptEngine
    let logger: Logger
    /// Table scripts by table name (folded to lower case).
    private(set) var tableScripts: [String: CompiledScript] = [:]
    private(set) var schemaScript: CompiledScript?
    /// Shared arrays reused between batch runs.
    let sharedArrays = SharedArrayPool()
    /// Supplies `lda`, `schema` and `session` to scripts. Weak: the adapter owns this host.
    weak var adapter: LocalDataAdapter?

    init(engine: ScriptEngine, logger: Logger, adapter: LocalDataAdapter) {
        self.engine = engine
        self.logger = logger
        self.adapter = adapter
    }


    /// A script compiled into its own global scope.
    final class CompiledScript {
        let script: RuleScript
        let context: ScriptContext
        let table: String?
        /// Handlers looked up once per name (nil: the script has none).
        private var handlers: [String: JSObjectRef?] = [:]

        init(script: RuleScript, context: ScriptContext, table: String?) {
            self.script = script
            self.context = context
            self.table = table
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
    func load(_ script: RuleScript, table: String?) throws {
        let context = try ScriptContext(machine: engine.machine)
        try installGlobals(in: context, table: table)
        if let coverage = adapter?.coverage { try instrumentFailures(context, for: coverage, script: script) }
        _ = try context.evaluate(script.source, fileName: script.fileName, line: 1)
        if let coverage = adapter?.coverage { try instrument(context, for: coverage, script: script) }
        let compiled = CompiledScript(script: script, context: context, table: table)
        sharedArrays.removeAll()
        // The scope a script replaces lives on while anything still holds it (a calculated
        // field compiled there, a cursor); every JavaScriptCore resource is freed by its owner.
        if let table {
            tableScripts[table.lowercased()] = compiled
        } else {
            schemaScript = compiled
        }
    }

    func script(forTable table: String) -> CompiledScript? { tableScripts[table.lowercased()] }

    /// The adapter, or an error for a script that runs after its adapter went away
    /// (a calculated field of a table the program kept).
    func liveAdapter() throws -> LocalDataAdapter {
        guard let adapter else {
            throw ScriptError(.runtime, "the LocalDataAdapter these rules belong to no longer exists")
        }
        return adapter
    }

    /// The scripts that handle events of a table: its own script, then the schema-wide one.
    func scripts(forTable table: String?) -> [CompiledScript] {
        [table.flatMap(script(forTable:)), schemaScript].compactMap { $0 }
    }

    /// Every script, schema-wide first (for transaction events).
    var allScripts: [CompiledScript] {
        [schemaScript].compactMap { $0 } + tableScripts.keys.sorted().compactMap { tableScripts[$0] }
    }

    /// Calls `event` in each script of a table that defines it, with arguments built
    /// in that script's scope. Errors carry the event, table and row.
    func fire(_ event: RuleEvent, table: String?, row: String? = nil,
              arguments: (ScriptContext) throws -> [JSValueRef]) throws {
        for script in scripts(forTable: table) {
            try fire(event, in: script, table: table, row: row, arguments: arguments)
        }
    }

    func fire(_ event: RuleEvent, in script: CompiledScript, table: String?, row: String? = nil,
              arguments: (ScriptContext) throws -> [JSValueRef]) throws {
        guard let handler = script.handler(event.handlerName) else { return }
        do {
            let returned = try script.context.call(handler, try arguments(script.context))
            if script.context.isPromise(returned) { throw Self.asyncHandler(event.handlerName) }
        } catch let thrown as ScriptError {
            var error = script.locatingFailCall(thrown)
            error.event = event.handlerName
            error.table = error.table ?? table
            error.row = error.row ?? row
            if error.file == nil { error.file = script.script.fileName }
            throw error
        }
    }

    /// The error for a handler that returned a promise: its `fail()` would be lost, so it is refused.
    static func asyncHandler(_ event: String) -> ScriptError {
        ScriptError(.runtime, "\(event) returned a promise; rule handlers run synchronously (remove async and await)")
    }

    /// True when any script defines the handler (so callers can skip building arguments).
    func handles(_ event: RuleEvent, table: String?) -> Bool {
        scripts(forTable: table).contains { $0.handler(event.handlerName) != nil }
    }
}

/// Connects one table to the rule host: the row events of ``DataTableRules``.
final class TableRules: DataTableRules {
    /// Weak: the adapter owns the host, and a table may outlive its adapter.
    weak var host: RuleHost?
    let tableName: String

    init(host: RuleHost, tableName: String) {
        self.host = host
        self.tableName = tableName
    }

    func rowDidAdd(_ row: DataTableRow) throws {
        try fire(.onNewRow, row)
    }

    func rowWillPost(_ row: DataTableRow, inserting: Bool) throws {
        try fire(.beforePost, row)
        if inserting {
            try fire(.beforeInsert, row)
        } else {
            try liveHost().fire(.beforeUpdate, table: tableName, row: row.label) { context in
                [RowObject.make(row, in: context), try originals(of: row, in: context)]
            }
        }
    }

    func rowWillRemove(_ row: DataTableRow) throws {
        try fire(.beforeDelete, row)
    }

    private func fire(_ event: RuleEvent, _ row: DataTableRow) throws {
        try liveHost().fire(event, table: tableName, row: row.label) { [RowObject.make(row, in: $0)] }
    }

    private func liveHost() throws -> RuleHost {
        guard let host else { throw ScriptError(.runtime, "the rules of table \(tableName) were unloaded with their adapter", table: tableName) }
        return host
    }


    /// `old`: the row's original values, read-only (writing one throws, as in a batch).
    private func originals(of row: DataTableRow, in context: ScriptContext) throws -> JSValueRef {
        let fields = row.table.fields
        let names = context.makeArray(fields.map { context.string($0.name) })
        let values = context.makeArray(fields.map { context.jsValue(row.originalValue(forKey: $0.name) ?? .null) })
        return try context.call(context.helper("readOnlyValues"), [names, values])
    }
}

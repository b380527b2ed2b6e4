internal import CJavaScriptCore
import Relata

/// Calculated fields whose values JavaScript functions compute.
extension RuleRuntime {
    /// A calculated field's function: a name in the table's script or a function expression.
    /// It is found (or compiled) in the table's *current* scope, again whenever that scope is
    /// replaced, and holds the scope it was found in, so it never calls into a released context.
    final class Calculation {
        let function: String
        let table: String
        let field: String
        /// Not kept alive: the table that computes the field may outlive its adapter.
        private let back: BackReference<RuleRuntime>
        private var host: RuleRuntime? { back.object }
        private var resolved: (scope: CompiledScript, function: JSObjectRef, fileName: String)?

        init(function: String, table: String, field: String, host: RuleRuntime) {
            self.function = function
            self.table = table
            self.field = field
            back = host.back
        }

        var isName: Bool {
            !function.isEmpty && function.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "$" }
        }

        /// The function and its scope, resolved against the table's current script.
        func resolve() throws -> (context: ScriptContext, function: JSObjectRef, fileName: String) {
            guard let host else { throw ScriptError(.runtime, "the rules of \(table).\(field) were unloaded with their adapter", table: table) }
            let scope = try host.calculationScope(forTable: table)
            if let resolved, resolved.scope === scope { return (scope.context, resolved.function, resolved.fileName) }
            let function: JSObjectRef
            let fileName: String
            if isName {
                guard let found = scope.handler(self.function) else {
                    throw ScriptError(.runtime, "the calculated field \(table).\(field) names function \(self.function), which the table's script does not define",
                                      table: table)
                }
                (function, fileName) = (found, scope.script.fileName)
            } else {
                fileName = "\(table).\(field)"
                function = try scope.context.compileFunction(self.function, fileName: fileName, line: 1)
            }
            resolved = (scope, function, fileName)
            return (scope.context, function, fileName)
        }
    }

    /// The scope calculated fields of a table run in: its script, else the schema-wide one,
    /// else an empty script loaded for the table.
    func calculationScope(forTable table: String) throws -> CompiledScript {
        if let script = script(forTable: table) ?? schemaScript { return script }
        try load(RuleScript("", fileName: "\(table).js"), table: table)
        guard let script = script(forTable: table) else { throw ScriptError(.runtime, "no scope for the rules of \(table)", table: table) }
        return script
    }

    /// A calculation for a calculated field, checked now (a missing function or a syntax error is reported at once).
    func calculationFunction(_ function: String, table: String, field: String) throws -> Calculation {
        let calculation = Calculation(function: function, table: table, field: field, host: self)
        _ = try calculation.resolve()
        return calculation
    }

    /// The value of a calculated field for a row. A failure is the script's error with its location
    /// only: the table wraps it in an error naming the table, field and row.
    func calculate(_ calculation: Calculation, row: DataTableRow, field: String) throws -> Value {
        let (context, function, _) = try calculation.resolve()
        let result = try context.call(function) { $0.append(RowObject.make(row, in: context)) }
        return try context.value(from: result, for: nil)
    }
}

internal import CJavaScriptCore
import Relata

/// Calculated fields whose values JavaScript functions compute.
extension RuleHost {
    /// A compiled calculation: the function and the scope it lives in.
    struct Calculation {
        let function: JSObjectRef
        let context: ScriptContext
        let fileName: String
    }

    /// Finds `function` by name in the table's script, or compiles it as a function expression.
    func calculationFunction(_ function: String, table: String, field: String) throws -> Calculation {
        let isName = function.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "$" } && !function.isEmpty
        if isName {
            guard let script = self.script(forTable: table) ?? schemaScript, let found = script.handler(function) else {
                throw ScriptError(.runtime, "the calculated field \(table).\(field) names function \(function), which the table's script does not define",
                                  table: table)
            }
            return Calculation(function: found, context: script.context, fileName: script.script.fileName)
        }
        let script = self.script(forTable: table) ?? schemaScript
        let context: ScriptContext
        if let script { context = script.context } else {
            try load(RuleScript("", fileName: "\(table).js"), table: table)
            context = self.script(forTable: table)!.context
        }
        let fileName = "\(table).\(field)"
        return Calculation(function: try context.compileFunction(function, fileName: fileName, line: 1), context: context,
                           fileName: fileName)
    }

    func calculate(_ calculation: Calculation, row: DataTableRow, field: String) throws -> Value {
        do {
            let result = try calculation.context.call(calculation.function, [RowObject.make(row, in: calculation.context)])
            return try calculation.context.value(from: result, for: nil)
        } catch var error as ScriptError {
            error.table = row.table.name
            error.row = row.label
            error.event = "calculated field \(field)"
            throw error
        }
    }
}

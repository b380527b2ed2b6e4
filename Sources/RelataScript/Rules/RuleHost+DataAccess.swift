internal import CJavaScriptCore
import Foundation
import Relata

/// `lda`: rules read and write the adapter's other tables.
///
/// ```js
/// const client = lda.select('Clients', order.ClientId);          // a row or null
/// const open = lda.selectWhere('Orders', 'ClientId = :id AND Paid = FALSE', { id: order.ClientId });
/// lda.insert('AuditLog', { Message: 'order changed' });
/// lda.update('Clients', client, { LastOrder: new Date() });       // a row, a key, or an array of key values
/// lda.remove('Reservations', 17);
/// ```
/// Writes go through the target table's rules. Made during an apply, they
/// join that apply; otherwise they stay pending until the next one.
extension RuleHost {
    func installDataAccess(in context: ScriptContext) {
        // The functions reach the adapter through the host, weakly: the adapter owns the host,
        // the host its scripts, the scripts these functions.
        let lda = Self.makeDataAccess(in: context) { [weak self] in
            guard let self else { throw ScriptError(.runtime, "the rules' host no longer exists") }
            return try self.liveAdapter()
        }
        context.setProperty("lda", of: context.global, to: lda, readOnly: true)
    }

    /// An `lda` object whose functions work on the adapter `adapter()` returns when they
    /// are called (rule test files use one over each test's fresh adapter).
    static func makeDataAccess(in context: ScriptContext, adapter: @escaping () throws -> LocalDataAdapter) -> JSObjectRef {
        let lda = context.makeObject()
        func define(_ name: String, _ body: @escaping (LocalDataAdapter, ScriptContext, [JSValueRef]) throws -> JSValueRef) {
            context.setProperty(name, of: lda, to: NativeFunction.make(in: context) { context, _, arguments in
                try body(try adapter(), context, arguments)
            }, readOnly: true)
        }
        define("select") { adapter, context, arguments in
            let table = try adapter.table(fromScript: arguments, in: context, function: "select")
            let key = try arguments.dropFirst().enumerated().map { index, value in
                try context.value(from: value, for: table.primaryKeyFields.indices.contains(index) ? table.primaryKeyFields[index].type : nil)
            }
            guard let row = try table.row(forPrimaryKey: key) else { return JSValueMakeNull(context.ref) }
            return RowObject.make(row, in: context)
        }
        define("selectWhere") { adapter, context, arguments in
            let table = try adapter.table(fromScript: arguments, in: context, function: "selectWhere")
            guard arguments.count > 1, let expression = JSString.string(of: arguments[1], in: context.ref) else {
                throw ScriptError(.runtime, "lda.selectWhere(table, where, parameters) needs a where expression")
            }
            let parameters = arguments.count > 2 ? try context.dictionary(from: arguments[2], table: nil) : [:]
            let rows = try table.rows(where: expression, parameters: parameters)
            return context.makeArray(rows.map { RowObject.make($0, in: context) })
        }
        define("insert") { adapter, context, arguments in
            let table = try adapter.table(fromScript: arguments, in: context, function: "insert")
            let values = arguments.count > 1 ? try context.dictionary(from: arguments[1], table: table) : [:]
            let row = try table.addNewRow(values: values)
            adapter.didChangeThroughScript(row)
            return RowObject.make(row, in: context)
        }
        define("update") { adapter, context, arguments in
            let table = try adapter.table(fromScript: arguments, in: context, function: "update")
            guard arguments.count > 2 else { throw ScriptError(.runtime, "lda.update(table, key, values) needs a key and the values") }
            let row = try adapter.row(of: table, identifiedBy: arguments[1], in: context)
            let values = try context.dictionary(from: arguments[2], table: table)
            try row.setValues(values)
            adapter.didChangeThroughScript(row)
            return RowObject.make(row, in: context)
        }
        define("remove") { adapter, context, arguments in
            let table = try adapter.table(fromScript: arguments, in: context, function: "remove")
            guard arguments.count > 1 else { throw ScriptError(.runtime, "lda.remove(table, key) needs a key") }
            let row = try adapter.row(of: table, identifiedBy: arguments[1], in: context)
            if adapter.isValidating && (row.rowState == .added || row.rowState == .addedInEditMode) {
                throw ScriptError(.runtime, "lda.remove cannot take a row added locally out of its table while validateChanges runs; cancel it afterwards")
            }
            try table.removeRow(row)
            adapter.didChangeThroughScript(row)
            return JSValueMakeUndefined(context.ref)
        }
        return lda
    }
}

extension LocalDataAdapter {
    /// The table named by a script's first argument, or an error listing the tables.
    func table(fromScript arguments: [JSValueRef], in context: ScriptContext, function: String) throws -> DataTable {
        guard let first = arguments.first, JSValueIsString(context.ref, first), let name = JSString.string(of: first, in: context.ref) else {
            throw ScriptError(.runtime, "lda.\(function) needs a table name as its first argument")
        }
        guard let table = table(named: name) else {
            throw ScriptError(.runtime, "lda.\(function): there is no table '\(name)' (tables: \(tables.map(\.name).joined(separator: ", ")))")
        }
        return table
    }

    /// A row given as a row object, a batch cursor, a key value, or an array of key values.
    func row(of table: DataTable, identifiedBy value: JSValueRef, in context: ScriptContext) throws -> DataTableRow {
        var value = value
        if JSValueIsObject(context.ref, value), !RowObject.isRow(value, in: context), let rowOf = try? context.helper("rowOf"),
           let row = try? context.call(rowOf, [value]), !JSValueIsUndefined(context.ref, row) {
            value = row
        }
        if let row = RowObject.row(of: value, in: context) {
            guard row.table === table else { throw ScriptError(.runtime, "the row belongs to table \(row.table.name), not \(table.name)") }
            return row
        }
        let keys: [JSValueRef]
        if JSValueIsArray(context.ref, value), let array = JSValueToObject(context.ref, value, nil) {
            keys = (0..<min(context.length(of: array), 64)).map { context.element($0, of: array) }
        } else {
            keys = [value]
        }
        let keyFields = table.primaryKeyFields
        let key = try keys.enumerated().map { index, js in
            try context.value(from: js, for: keyFields.indices.contains(index) ? keyFields[index].type : nil)
        }
        guard let row = try table.row(forPrimaryKey: key) else {
            throw ScriptError(.runtime, "table \(table.name) has no row with key \(key.map(\.description).joined(separator: ", "))")
        }
        return row
    }
}

extension ScriptContext {
    /// A plain JavaScript object as field values by name (converted for `table`'s field types).
    func dictionary(from value: JSValueRef, table: DataTable?) throws -> [String: Value] {
        guard JSValueIsObject(ref, value), let object = JSValueToObject(ref, value, nil) else {
            throw ScriptError(.runtime, "expected an object of field values, such as { Name: 'Acme' }")
        }
        let names = JSObjectCopyPropertyNames(ref, object)
        defer { JSPropertyNameArrayRelease(names) }
        var result: [String: Value] = [:]
        for index in 0..<JSPropertyNameArrayGetCount(names) {
            let name = JSString.string(JSPropertyNameArrayGetNameAtIndex(names, index))
            result[name] = try self.value(from: property(name, of: object), for: table?.field(named: name)?.type)
        }
        return result
    }
}

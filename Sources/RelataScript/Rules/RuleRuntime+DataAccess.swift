package import CJavaScriptCore
import Foundation
import Relata

/// `lda`: rules read and write the adapter's other tables.
///
/// ```js
/// const client = lda.select('Clients', order.ClientId);          // a row or null
/// const open = lda.selectWhere('Orders', 'ClientId = :id AND Paid = FALSE', { id: order.ClientId });
/// const [totals] = lda.sql('SELECT COUNT(*) AS N, SUM(Total) AS Sum FROM Orders WHERE ClientId = :id', { id: order.ClientId });
/// lda.insert('AuditLog', { Message: 'order changed' });
/// lda.update('Clients', client, { LastOrder: new Date() });       // a row, a key, or an array of key values
/// lda.remove('Reservations', 17);
/// ```
/// Writes go through the target table's rules. Made during an apply, they
/// join that apply; otherwise they stay pending until the next one.
extension RuleRuntime {
    func installDataAccess(in context: ScriptContext) {
        // The functions reach the data through the runtime without keeping it alive: the runtime
        // owns its scripts, the scripts these functions.
        let back = self.back
        let lda = Self.makeDataAccess(in: context) { function in
            guard let runtime = back.object else { throw ScriptError(.runtime, "lda.\(function): the rules' runtime no longer exists") }
            return try runtime.dataAccess(for: function)
        }
        context.setProperty("lda", of: context.global, to: lda, readOnly: true)
    }

    /// An `lda` object whose functions work on the data `dataAccess(function)` returns when
    /// they are called (rule test files use one over each test's fresh adapter).
    package static func makeDataAccess(in context: ScriptContext,
                               dataAccess: @escaping (_ function: String) throws -> any RuleDataAccess) -> JSObjectRef {
        let lda = context.makeObject()
        func define(_ name: String, _ body: @escaping (DataAccessCall) throws -> JSValueRef) {
            context.setProperty(name, of: lda, to: NativeFunction.make(in: context) { context, _, arguments in
                try body(DataAccessCall(function: name, data: try dataAccess(name), context: context, arguments: arguments))
            }, readOnly: true)
        }
        define("select") { call in
            let (table, fields) = try call.table()
            let keyFields = fields.filter(\.primaryKey)
            let key = try call.arguments.dropFirst().enumerated().map { index, value in
                try call.context.value(from: value, for: keyFields.indices.contains(index) ? keyFields[index].type : nil)
            }
            guard let row = try call.data.row(in: table, key: key) else { return JSValueMakeNull(call.context.ref) }
            return RowObject.make(row, in: call.context)
        }
        define("selectWhere") { call in
            let (table, _) = try call.table()
            guard call.arguments.count > 1, let expression = JSString.string(of: call.arguments[1], in: call.context.ref) else {
                throw ScriptError(.runtime, "lda.selectWhere(table, where, parameters) needs a where expression")
            }
            let parameters = call.arguments.count > 2 ? try call.context.dictionary(from: call.arguments[2], fields: nil) : [:]
            let rows = try call.data.rows(in: table, where: expression, parameters: parameters)
            return call.context.makeArray(rows) { RowObject.make($0, in: call.context) }
        }
        define("sql") { call in
            guard let first = call.arguments.first, JSValueIsString(call.context.ref, first),
                  let sql = JSString.string(of: first, in: call.context.ref) else {
                throw ScriptError(.runtime, "lda.sql(query, parameters) needs a DA SQL query as its first argument")
            }
            let parameters = call.arguments.count > 1 ? try call.context.dictionary(from: call.arguments[1], fields: nil) : [:]
            let answer = try call.data.answer(sql: sql, parameters: parameters)
            return call.context.makeArray(answer.rows) { RowObject.make($0, in: call.context) }
        }
        define("insert") { call in
            let (table, fields) = try call.table()
            let values = call.arguments.count > 1 ? try call.context.dictionary(from: call.arguments[1], fields: fields) : [:]
            return RowObject.make(try call.data.insert(into: table, values: values), in: call.context)
        }
        define("update") { call in
            let (table, fields) = try call.table()
            guard call.arguments.count > 2 else { throw ScriptError(.runtime, "lda.update(table, key, values) needs a key and the values") }
            let row = try call.row(of: table, fields: fields, identifiedBy: call.arguments[1])
            try call.data.update(row, values: try call.context.dictionary(from: call.arguments[2], fields: fields))
            return RowObject.make(row, in: call.context)
        }
        define("remove") { call in
            let (table, fields) = try call.table()
            guard call.arguments.count > 1 else { throw ScriptError(.runtime, "lda.remove(table, key) needs a key") }
            try call.data.remove(try call.row(of: table, fields: fields, identifiedBy: call.arguments[1]))
            return JSValueMakeUndefined(call.context.ref)
        }
        return lda
    }
}

/// One `lda` call: the function, the data it works on, and the script's arguments.
struct DataAccessCall {
    let function: String
    let data: any RuleDataAccess
    let context: ScriptContext
    let arguments: [JSValueRef]

    /// The table named by the first argument (its name as the data spells it, and its fields),
    /// or an error listing the tables.
    func table() throws -> (name: String, fields: [FieldDefinition]) {
        guard let first = arguments.first, JSValueIsString(context.ref, first), let name = JSString.string(of: first, in: context.ref) else {
            throw ScriptError(.runtime, "lda.\(function) needs a table name as its first argument")
        }
        guard let fields = data.fields(ofTable: name),
              let spelled = data.tableNames.first(where: { $0.equalsIgnoringCase(name) }) else {
            throw ScriptError(.runtime, "lda.\(function): there is no table '\(name)' (tables: \(data.tableNames.joined(separator: ", ")))")
        }
        return (spelled, fields)
    }

    /// A row given as a row object, a batch cursor, a key value, or an array of key values.
    func row(of table: String, fields: [FieldDefinition], identifiedBy value: JSValueRef) throws -> DataTableRow {
        var value = value
        if JSValueIsObject(context.ref, value), !RowObject.isRow(value, in: context), let rowOf = try? context.helper("rowOf"),
           let row = try? context.call(rowOf, [value]), !JSValueIsUndefined(context.ref, row) {
            value = row
        }
        if let row = try RowObject.row(of: value, in: context) {
            guard row.table.name.equalsIgnoringCase(table) else {
                throw ScriptError(.runtime, "the row belongs to table \(row.table.name), not \(table)")
            }
            return row
        }
        let keys: [JSValueRef]
        if JSValueIsArray(context.ref, value), let array = JSValueToObject(context.ref, value, nil) {
            keys = (0..<min(context.length(of: array), 64)).map { context.element($0, of: array) }
        } else {
            keys = [value]
        }
        let keyFields = fields.filter(\.primaryKey)
        let key = try keys.enumerated().map { index, js in
            try context.value(from: js, for: keyFields.indices.contains(index) ? keyFields[index].type : nil)
        }
        guard let row = try data.row(in: table, key: key) else {
            throw ScriptError(.runtime, "table \(table) has no row with key \(key.map(\.description).joined(separator: ", "))")
        }
        return row
    }
}

extension ScriptContext {
    /// A plain JavaScript object as field values by name (converted for the types of `fields`).
    package func dictionary(from value: JSValueRef, fields: [FieldDefinition]?) throws -> [String: Value] {
        guard JSValueIsObject(ref, value), let object = JSValueToObject(ref, value, nil) else {
            throw ScriptError(.runtime, "expected an object of field values, such as { Name: 'Acme' }")
        }
        let names = JSObjectCopyPropertyNames(ref, object)
        defer { JSPropertyNameArrayRelease(names) }
        var result: [String: Value] = [:]
        for index in 0..<JSPropertyNameArrayGetCount(names) {
            let name = JSString.string(JSPropertyNameArrayGetNameAtIndex(names, index))
            result[name] = try self.value(from: property(name, of: object), for: fields?.first { $0.name.equalsIgnoringCase(name) }?.type)
        }
        return result
    }
}

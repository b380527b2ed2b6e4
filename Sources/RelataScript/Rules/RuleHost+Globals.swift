internal import CJavaScriptCore
import Foundation
import Logging
import Relata

/// The globals every rule script sees: `fail`, `log`, `newGuid`, `isServer`,
/// `session`, `lda` and `schema`.
extension RuleHost {
    static let bootstrap = """
        function __relataError(message) { return new Error(message) }
        function fail(message) {
            const error = new Error(message === undefined ? 'the rule failed' : String(message));
            error.name = 'RuleFailure';
            error.__relataFail = true;
            if (typeof __relataFailReached === 'function') __relataFailReached(error.stack);
            throw error;
        }
        function log(...parts) {
            __relataLog(parts.map(p => typeof p === 'string' ? p : JSON.stringify(p)).join(' '), new Error().stack);
        }
        function __relataDescribe(e) {
            if (e === null || typeof e !== 'object') return '\\u0001' + String(e);
            return [e.name, e.__relataFail === true ? '1' : '0', e.message, e.stack, e.sourceURL, e.line, e.column].join('\\u0000');
        }
        function __relataJoinFailures(failures) {
            const parts = [];
            for (let k = 0; k < failures.length; k += 2) parts.push(failures[k] + '\\u0003' + failures[k + 1]);
            return parts.join('\\u0002');
        }
        function __relataMap(fn, row, start, end, out, odd, numeric) {
            for (let i = start; i < end; i++) {
                row.i = i;
                const v = fn(row);
                if (!numeric) out[i] = v;
                else if (typeof v === 'number') out[i] = v;
                else if (v === null || v === undefined) out[i] = NaN;
                else { out[i] = NaN; odd.push(i, v); }
            }
        }
        function __relataChange(type, changeId, oldValues, newValues, status, message) {
            const change = {
                type, changeId, changeID: changeId, oldValues, newValues, status, message,
                get isInsert() { return this.type === 'insert' },
                get isUpdate() { return this.type === 'update' },
                get isDelete() { return this.type === 'delete' },
                get failed() { return this.status === 'failed' },
                get error() { return this.message },
            };
            for (const key of new Set(Object.keys(oldValues).concat(Object.keys(newValues)))) {
                if (key in change) continue;
                Object.defineProperty(change, key, {
                    enumerable: true,
                    get() { return key in this.newValues ? this.newValues[key] : this.oldValues[key] },
                });
            }
            return change;
        }
        """

    func installGlobals(in context: ScriptContext, table: String?) throws {
        _ = try context.evaluate(Self.bootstrap, fileName: ScriptContext.bootstrapFile, line: 1)
        let logger = self.logger
        context.defineFunction("__relataLog") { context, _, arguments in
            let text = arguments.first.flatMap { JSString.string(of: $0, in: context.ref) } ?? ""
            let stack = arguments.count > 1 ? JSString.string(of: arguments[1], in: context.ref) ?? "" : ""
            let frame = StackFrame.innermostInScripts(of: stack)
            var metadata: Logger.Metadata = [:]
            if let frame { metadata["script"] = "\(frame.file):\(frame.line):\(frame.column)" }
            if let table { metadata["table"] = "\(table)" }
            logger.info("\(text)", metadata: metadata)
            return JSValueMakeUndefined(context.ref)
        }
        context.defineFunction("newGuid") { context, _, _ in context.string(UUID().uuidString) }
        installSession(in: context)
        installSchema(in: context)
        installDataAccess(in: context)
    }

    /// `isServer`, and `session`: the adapter's session values by key, `roles`, and `hasRole(name)`.
    func installSession(in context: ScriptContext) {
        context.setProperty("isServer", of: context.global, to: JSValueMakeBoolean(context.ref, adapter?.isServer ?? false))
        let session = context.makeObject()
        let current = adapter?.session ?? Session()
        for (key, value) in current.values.sorted(by: { $0.key < $1.key }) {
            context.setProperty(key, of: session, to: context.jsValue(value), readOnly: true)
        }
        let roles = current.roles
        context.setProperty("roles", of: session, to: context.makeArray(roles.map { context.string($0) }), readOnly: true)
        context.setProperty("hasRole", of: session, to: NativeFunction.make(in: context) { context, _, arguments in
            let role = arguments.first.flatMap { JSString.string(of: $0, in: context.ref) } ?? ""
            return JSValueMakeBoolean(context.ref, roles.contains(role))
        }, readOnly: true)
        context.setProperty("session", of: context.global, to: session)
    }

    /// `schema`: `schema.tables` (names) and, per table, `schema.Clients.fields`.
    func installSchema(in context: ScriptContext) {
        let schema = context.makeObject()
        let tables = adapter?.tables ?? []
        context.setProperty("tables", of: schema, to: context.makeArray(tables.map { context.string($0.name) }), readOnly: true)
        for table in tables {
            let description = context.makeObject()
            context.setProperty("name", of: description, to: context.string(table.name), readOnly: true)
            let fields = table.fields.map { field -> JSValueRef in
                let object = context.makeObject()
                context.setProperty("name", of: object, to: context.string(field.name), readOnly: true)
                context.setProperty("type", of: object, to: context.string(field.type.rawValue), readOnly: true)
                context.setProperty("size", of: object, to: JSValueMakeNumber(context.ref, Double(field.size)), readOnly: true)
                context.setProperty("required", of: object, to: JSValueMakeBoolean(context.ref, field.required), readOnly: true)
                context.setProperty("readOnly", of: object, to: JSValueMakeBoolean(context.ref, field.readOnly), readOnly: true)
                context.setProperty("primaryKey", of: object, to: JSValueMakeBoolean(context.ref, field.primaryKey), readOnly: true)
                return object
            }
            context.setProperty("fields", of: description, to: context.makeArray(fields), readOnly: true)
            context.setProperty(table.name, of: schema, to: description, readOnly: true)
        }
        context.setProperty("schema", of: context.global, to: schema)
    }

    /// Rebuilds `session` and `schema` in every script after the adapter's session or tables changed.
    func refreshGlobals() {
        for script in allScripts {
            installSession(in: script.context)
            installSchema(in: script.context)
        }
    }
}

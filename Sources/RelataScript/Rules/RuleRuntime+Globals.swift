internal import CJavaScriptCore
import Foundation
import Logging
import Relata

/// The globals every rule script sees: `fail`, `log`, `newGuid`, `isServer`,
/// `session`, `lda` and `schema`.
extension RuleRuntime {
    /// Relata's side of every rule scope: helpers in `relata` (out of the scripts' reach),
    /// then `fail` and `log` as read-only globals.
    static let bootstrap = """
        // Batch row cursors: what a row cursor stands for (its row, for `lda`), and the
        // prototype that makes a misspelt field name an error, as on a row object.
        relata.cursors = new WeakMap();
        relata.rowOf = function (value) { const row = relata.cursors.get(value); return row === undefined ? undefined : row(); };
        relata.languageNames = new Set([\(RowObject.languageNames.sorted().map(\.scriptLiteral).joined(separator: ", "))]);
        relata.rowPrototype = function (index, get, set) {
            const plain = (name) => typeof name === 'symbol' || relata.languageNames.has(name);
            return new Proxy(Object.prototype, {
                get(target, name, receiver) { return plain(name) ? Reflect.get(target, name, receiver) : get(index(), name); },
                set(target, name, value, receiver) {
                    if (plain(name)) return Reflect.set(target, name, value, receiver);
                    set(index(), name, value);
                    return true;
                },
                has(target, name) { if (plain(name)) return Reflect.has(target, name); get(index(), name); return true; },
            });
        };
        // A batch's failures (row index, description, …): the distinct descriptions, and into
        // `pairs` each failure's row index and the number of its description.
        relata.groupFailures = function (failures, pairs) {
            const numbers = new Map(), distinct = [];
            for (let k = 0; k < failures.length; k += 2) {
                let number = numbers.get(failures[k + 1]);
                if (number === undefined) { number = distinct.length; numbers.set(failures[k + 1], number); distinct.push(failures[k + 1]); }
                pairs[k] = failures[k];
                pairs[k + 1] = number;
            }
            return distinct;
        };
        relata.valuesObject = function (names, values, offset = 0) {
            const object = {};
            for (let k = 0; k < names.length; k++)
                Object.defineProperty(object, names[k], { value: values[offset + k], enumerable: true, writable: true, configurable: true });
            return object;
        };
        // Many objects of the same names: each a copy of one object with every name defined, its
        // values then set — on own properties, so no setter a script put on Object.prototype (nor
        // a name like __proto__) is reached, as with defining each, at a tenth of the cost.
        relata.valuesObjects = function (names) {
            const template = relata.valuesObject(names, []);
            return (values, offset) => {
                const object = { ...template };
                for (let k = 0; k < names.length; k++) object[names[k]] = values[offset + k];
                return object;
            };
        };
        // A delta's change objects, made in one call (`DeltaView`): six numbers a change in
        // `header` (id, type and status as indexes into `strings`, then its old, new and all
        // field names as indexes into `lists`), its message (if any) in `messages`, and every old
        // value, then every new value, of every change packed (`PackedValues`).
        relata.changes = function (header, lists, strings, messages, kinds, numbers, text, others) {
            const values = relata.unpack(kinds, numbers, text, others);
            const made = new Array(header.length / 6);
            const makers = new Array(lists.length);
            const maker = (list) => makers[list] ??= relata.valuesObjects(lists[list]);
            const prototypes = new Array(lists.length);
            const prototype = (list) => prototypes[list] ??= relata.changePrototype(lists[list]);
            let offset = 0;
            for (let i = 0; i < made.length; i++) {
                const h = 6 * i, oldList = header[h + 3], newList = header[h + 4];
                const oldValues = maker(oldList)(values, offset);
                offset += lists[oldList].length;
                const newValues = maker(newList)(values, offset);
                offset += lists[newList].length;
                const message = messages[i];
                made[i] = relata.change(prototype(header[h + 5]), strings[header[h + 1]], header[h], oldValues, newValues,
                                        strings[header[h + 2]], message === undefined ? null : message);
            }
            return made;
        };
        // A delta's change events for `changes[start..<end]` in one call (`RuleRuntime.runChangeEvents`):
        // for each change, `before(delta, change)`, the change shown resolved, `after(delta, change)`
        // (either may be null). Returns [next] when every change before `next` passed — it stops
        // after `slice` ms, so the time limit still bounds about one change's run — or
        // [index, phase, thrown, promised] for the first change whose handler threw (phase 0:
        // before, 1: after) or returned a promise. `at` is [the change running, its phase], for a
        // stop no script can catch (the time limit).
        // As a call per change does from Swift: a `then` that cannot be read is no promise, and a
        // status or message a script made impossible to write is left as it is.
        const now = Date.now;
        const thenable = (value) => {
            try { return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof value.then === 'function'; }
            catch (ignored) { return false; }
        };
        const show = (change) => {
            try { change.status = 'resolved'; } catch (ignored) {}
            try { change.message = null; } catch (ignored) {}
        };
        relata.runChanges = function (before, after, delta, changes, start, end, slice, at) {
            const stop = now() + slice;
            for (let i = start; i < end; i++) {
                const change = changes[i];
                at[0] = i;
                at[1] = 0;
                if (before !== null) {
                    let returned;
                    try { returned = before(delta, change); } catch (thrown) { return [i, 0, thrown, false]; }
                    if (thenable(returned)) return [i, 0, undefined, true];
                }
                show(change);
                if (after !== null) {
                    at[1] = 1;
                    let returned;
                    try { returned = after(delta, change); } catch (thrown) { return [i, 1, thrown, false]; }
                    if (thenable(returned)) return [i, 1, undefined, true];
                }
                if (now() >= stop) return [i + 1];
            }
            return [end];
        };
        \(PackedValues.unpackScript)
        const fail = function fail(message) {
            const error = new Error(message === undefined ? 'the rule failed' : relata.show(message));
            error.name = 'RuleFailure';
            error.__relataFail = true;
            if (relata.failReached) relata.failReached(error.stack);
            throw error;
        };
        const log = function log(...parts) {
            relata.log(parts.map(p => typeof p === 'string' ? p : relata.show(p)).join(' '), new Error().stack);
        };
        for (const [name, value] of [['fail', fail], ['log', log]])
            Object.defineProperty(globalThis, name, { value, writable: false, enumerable: false, configurable: false });
        """

    func installGlobals(in context: ScriptContext, table: String?) throws {
        Self.installLog(in: context, logger: logger, table: table)
        try context.install(Self.bootstrap)
        context.defineFunction("newGuid") { context, _, _ in context.string(UUID().uuidString) }
        installSession(in: context)
        installDataAccess(in: context)
    }

    /// What `log(…)` in a scope calls (`relata.log`): a line at `info`, with the script's place.
    package static func installLog(in context: ScriptContext, logger: Logger, table: String?) {
        context.setProperty("log", of: context.runtime, to: NativeFunction.make(in: context) { context, _, arguments in
            let text = arguments.first.flatMap { JSString.string(of: $0, in: context.ref) } ?? ""
            let stack = arguments.count > 1 ? JSString.string(of: arguments[1], in: context.ref) ?? "" : ""
            let frame = StackFrame.innermostInScripts(of: stack)
            var metadata: Logger.Metadata = [:]
            if let frame { metadata["script"] = "\(frame.file):\(frame.line):\(frame.column)" }
            if let table { metadata["table"] = "\(table)" }
            logger.info("\(text)", metadata: metadata)
            return JSValueMakeUndefined(context.ref)
        })
    }

    /// `isServer`, and `session`: the environment's session values by key, `roles`, and `hasRole(name)`.
    func installSession(in context: ScriptContext) {
        context.setProperty("isServer", of: context.global, to: JSValueMakeBoolean(context.ref, environment.isServer))
        Self.installSession(environment.session, in: context)
    }

    /// Makes `session` in a scope the object rules see for a session (rule test files see the
    /// same one): its values by key, `roles`, and `hasRole(name)`.
    package static func installSession(_ current: Session, in context: ScriptContext) {
        let session = context.makeObject()
        for (key, value) in current.values.sorted(by: { $0.key < $1.key }) {
            context.setProperty(key, of: session, to: context.jsValue(value), readOnly: true)
        }
        let roles = current.roles
        context.setProperty("roles", of: session, to: context.makeArray(roles) { context.string($0) }, readOnly: true)
        context.setProperty("hasRole", of: session, to: NativeFunction.make(in: context) { context, _, arguments in
            let role = arguments.first.flatMap { JSString.string(of: $0, in: context.ref) } ?? ""
            return JSValueMakeBoolean(context.ref, roles.contains(role))
        }, readOnly: true)
        context.setProperty("session", of: context.global, to: session)
    }

    /// `schema`: `schema.tables` (names) and, per table, `schema.Clients.fields`; made once per
    /// scope and list of tables.
    func installSchema(in script: CompiledScript) {
        let context = script.context
        let dataAccess = environment.dataAccess
        let tables = dataAccess?.tableNames ?? []
        if let made = script.schemaObjects[tables] {
            context.setProperty("schema", of: context.global, to: made)
            return
        }
        let schema = context.makeObject()
        context.setProperty("tables", of: schema, to: context.makeArray(tables) { context.string($0) }, readOnly: true)
        for table in tables {
            let description = context.makeObject()
            context.setProperty("name", of: description, to: context.string(table), readOnly: true)
            let fields = context.makeArray(dataAccess?.fields(ofTable: table) ?? []) { field in
                let object = context.makeObject()
                context.setProperty("name", of: object, to: context.string(field.name), readOnly: true)
                context.setProperty("type", of: object, to: context.string(field.type.rawValue), readOnly: true)
                context.setProperty("size", of: object, to: JSValueMakeNumber(context.ref, Double(field.size)), readOnly: true)
                context.setProperty("required", of: object, to: JSValueMakeBoolean(context.ref, field.required), readOnly: true)
                context.setProperty("readOnly", of: object, to: JSValueMakeBoolean(context.ref, field.readOnly), readOnly: true)
                context.setProperty("primaryKey", of: object, to: JSValueMakeBoolean(context.ref, field.primaryKey), readOnly: true)
                return object
            }
            context.setProperty("fields", of: description, to: fields, readOnly: true)
            context.setProperty(table, of: schema, to: description, readOnly: true)
        }
        JSValueProtect(context.ref, schema)
        script.schemaObjects[tables] = schema
        context.setProperty("schema", of: context.global, to: schema)
    }

}

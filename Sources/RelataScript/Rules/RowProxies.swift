internal import CJavaScriptCore
import Foundation
import Relata

/// The `row` and `old` a row event's handler is called with (`beforeUpdate(row, old)`): proxies
/// made in JavaScript over the values, handed over with the call, of the stored fields the
/// script's text mentions. Reading such a field is a property read in JavaScript; every other
/// name, every write, and a value Swift may have changed since it was handed over (the context's
/// epoch has moved: an `lda` call, another object's write, Swift code between calls) go to
/// Swift, through ``RowObject``'s own reading and writing, so they behave as row objects always
/// have — live, checked, a misspelt name an error. `old` is the row's original values as the
/// handler was called, read-only.
///
/// A proxy holds its table's number (``RowTables``) and its row's position, not the row: making
/// one costs no Swift object, and a call a handful of values. A kept proxy reads its row for as
/// long as the table's rows stay in place.
///
/// Made once per script scope and table layout, and kept with the script.
final class RowProxies {
    /// The stored fields whose values are handed over with each call, by position in the table.
    let eager: [Int]
    /// `(handler, table, position, values…)`: calls the handler with the row's object.
    private let callWithRow: JSObjectRef
    /// `(handler, table, position, originals generation, values…, originals…)`: with `old` too.
    private let callWithOriginals: JSObjectRef

    /// The proxies of rows of `table` in `script`'s scope, reaching rows through `rowTables`.
    init(table: DataTable, script: String, context: ScriptContext, rowTables: RowTables) throws {
        let stored = table.fieldNames
        let eager = table.fields.indices.filter { index in
            Self.handsOver(table.fields[index].type) && BatchCursor.mentions(script, table.fields[index].name)
        }
        self.eager = eager
        let tableName = table.name
        func row(_ arguments: [JSValueRef], in context: ScriptContext) throws -> DataTableRow {
            guard arguments.count >= 2, let number = context.integer(from: arguments[0]), let position = context.integer(from: arguments[1]) else {
                throw ScriptError(.runtime, "a row object of table \(tableName) was called wrongly")
            }
            return try rowTables.row(table: number, position: position, tableName: tableName)
        }
        func eagerValues(of row: DataTableRow, in context: ScriptContext) -> JSValueRef {
            context.makeArray(eager) { context.jsValue(row.value(at: $0)) }
        }
        let notAField = context.property("notAField", of: context.runtime)
        // read(table, position, name): any name but a handed-over field's; notAField for a name
        // JavaScript itself asks objects for that is no field.
        let read = NativeFunction.make(in: context) { context, _, arguments in
            let row = try row(arguments, in: context)
            let name = arguments.count > 2 ? JSString.string(of: arguments[2], in: context.ref) ?? "" : ""
            return try RowObject.read(name, of: row, in: context) ?? notAField
        }
        let readEager = NativeFunction.make(in: context) { context, _, arguments in
            eagerValues(of: try row(arguments, in: context), in: context)
        }
        // write(table, position, name, value): the handed-over values as they are after the write.
        let write = NativeFunction.make(in: context) { context, _, arguments in
            let row = try row(arguments, in: context)
            guard arguments.count == 4 else { throw ScriptError(.runtime, "a row object of table \(tableName) was called wrongly") }
            try RowObject.write(arguments[3], named: JSString.string(of: arguments[2], in: context.ref) ?? "", to: row, in: context)
            return eagerValues(of: row, in: context)
        }
        // readOriginal(table, position, originals generation, field position): a field `old` was not handed.
        let readOriginal = NativeFunction.make(in: context) { context, _, arguments in
            let row = try row(arguments, in: context)
            guard arguments.count == 4, let generation = context.integer(from: arguments[2]),
                  let field = context.index(from: arguments[3], count: stored.count) else {
                throw ScriptError(.runtime, "the old values of table \(tableName) were called wrongly")
            }
            guard generation == row.table.originalValuesGeneration else {
                throw ScriptError(.runtime, "old.\(stored[field]) of table \(tableName): the row's original values were replaced "
                                  + "(an apply or a merge) after this old was made; read what you need of old while its handler runs")
            }
            return context.jsValue(row.originalValue(at: field) ?? .null)
        }
        let names = NativeFunction.make(in: context) { context, _, arguments in
            let row = try row(arguments, in: context)
            return context.makeArray(row.table.fieldNames + row.table.virtualFieldNames) { context.string($0) }
        }
        // handle(table, position): a row object of the row, for `lda` (`relata.rowOf`).
        let handle = NativeFunction.make(in: context) { context, _, arguments in
            RowObject.make(try row(arguments, in: context), in: context)
        }
        let objects = try context.call(try context.helper("rowObjects")) { arguments in
            arguments.append(context.makeArray(eager) { context.string(stored[$0]) })
            arguments.append(context.makeArray(stored) { context.string($0) })
            for native in [read, readEager, write, readOriginal, names, handle] { arguments.append(native) }
        }
        let callers = try context.call(try context.generated("rowCallers:\(eager.count)") { Self.callersSource(eager.count) }, [objects])
        guard let array = JSValueToObject(context.ref, callers, nil),
              let withRow = JSValueToObject(context.ref, context.element(0, of: array), nil),
              let withOriginals = JSValueToObject(context.ref, context.element(1, of: array), nil) else {
            throw ScriptError(.runtime, "could not build the row objects of table \(tableName)")
        }
        callWithRow = withRow
        callWithOriginals = withOriginals
        context.protect(withRow)
        context.protect(withOriginals)
    }

    /// Calls `handler` with the row's object, and with `old` too when `withOriginals`.
    func call(_ handler: JSObjectRef, row: DataTableRow, table number: Int, withOriginals: Bool,
              in context: ScriptContext) throws -> JSValueRef {
        try context.call(withOriginals ? callWithOriginals : callWithRow) { arguments in
            arguments.append(handler)
            arguments.append(JSValueMakeNumber(context.ref, Double(number)))
            arguments.append(JSValueMakeNumber(context.ref, Double(row.position)))
            if withOriginals { arguments.append(JSValueMakeNumber(context.ref, Double(row.table.originalValuesGeneration))) }
            for field in eager { arguments.append(ScriptContext.jsValue(row.value(at: field), in: context.ref)) }
            if withOriginals {
                for field in eager { arguments.append(ScriptContext.jsValue(row.originalValue(at: field) ?? .null, in: context.ref)) }
            }
        }
    }

    /// Whether a field's values are handed over with each call: those JavaScript holds as
    /// immutable values. A date or a blob is a fresh object on every read, as on a row object,
    /// so a script that changes the one it read has not changed the row.
    private static func handsOver(_ type: DataType) -> Bool {
        switch type.storage {
        case .integer, .double, .decimal, .boolean, .string, .guid: return true
        case .date, .blob: return false
        }
    }

    /// The callers for `count` handed-over fields: `[withRow, withOriginals]`.
    private static func callersSource(_ count: Int) -> String {
        let current = (0..<count).map { "c\($0)" }, originals = (0..<count).map { "o\($0)" }
        let values = "[\(current.joined(separator: ", "))]", oldValues = "[\(originals.joined(separator: ", "))]"
        return """
            function (objects) {
                const row = objects.row, old = objects.old;
                return [
                    function (handler, t, s\(current.map { ", " + $0 }.joined())) { return handler(row(t, s, \(values))); },
                    function (handler, t, s, g\((current + originals).map { ", " + $0 }.joined())) {
                        return handler(row(t, s, \(values)), old(t, s, g, \(oldValues)));
                    },
                ];
            }
            """
    }

    /// The JavaScript half (`relata.rowObjects`, in every rule scope's bootstrap): given the
    /// handed-over and stored field names and the native functions above, `{ row, old }`, the
    /// makers of the proxies. A row proxy's target is `{ v: values, e: epoch, t: table, s: position }`;
    /// `old`'s keeps the same under symbols no script can reach, so any other name a script sets
    /// on it is its own, as on a plain object.
    static let bootstrap = """
        relata.notAField = Object.freeze({});
        relata.rowKey = Symbol('row');
        relata.rowObjects = function (eager, stored, read, readEager, write, readOriginal, names, handle) {
            const epoch = relata.epoch, notAField = relata.notAField, rowKey = relata.rowKey;
            const eagerAt = new Map(eager.map((name, k) => [name, k]));
            // A stored field's position by its name, or by any name canonically equivalent to it
            // (as Swift compares names): what `old` reads, as a row object reads it.
            const storedAt = new Map(stored.map((name, k) => [name, k]));
            stored.forEach((name, k) => { if (!storedAt.has(name.normalize())) storedAt.set(name.normalize(), k); });
            const storedPosition = (name) => {
                const position = storedAt.get(name);
                return position !== undefined || typeof name !== 'string' ? position : storedAt.get(name.normalize());
            };
            const described = (value, writable) => ({ value, writable, enumerable: true, configurable: true });
            const rowHandler = {
                get(r, name, receiver) {
                    const k = eagerAt.get(name);
                    if (k !== undefined) {
                        if (r.e !== epoch[0]) { r.v = readEager(r.t, r.s); r.e = epoch[0]; }
                        return r.v[k];
                    }
                    if (typeof name === 'symbol') {
                        if (name === rowKey) return () => handle(r.t, r.s);
                        return name === Symbol.toStringTag ? 'DataTableRow' : Reflect.get(r, name, receiver);
                    }
                    const value = read(r.t, r.s, name);
                    return value === notAField ? Reflect.get(r, name, receiver) : value;
                },
                set(r, name, value) {
                    if (typeof name === 'symbol') return Reflect.set(r, name, value);
                    r.v = write(r.t, r.s, name, value);
                    r.e = epoch[0];
                    return true;
                },
                has(r, name) {
                    if (eagerAt.has(name)) return true;
                    if (typeof name === 'symbol') return Reflect.has(r, name);
                    return read(r.t, r.s, name) === notAField ? Reflect.has(r, name) : true;
                },
                deleteProperty() { throw relata.error('fields cannot be deleted from a row; set them to null instead'); },
                ownKeys(r) { return names(r.t, r.s); },
                getOwnPropertyDescriptor(r, name) {
                    if (typeof name === 'symbol') return Reflect.getOwnPropertyDescriptor(r, name);
                    const value = eagerAt.has(name) ? this.get(r, name) : read(r.t, r.s, name);
                    return value === notAField ? undefined : described(value, true);
                },
                defineProperty(r, name, descriptor) {
                    if (typeof name === 'symbol') return Reflect.defineProperty(r, name, descriptor);
                    if (!('value' in descriptor)) throw relata.error('a row\\'s fields cannot be given getters or setters; assign them instead');
                    this.set(r, name, descriptor.value);
                    return true;
                },
                preventExtensions() { throw relata.error('a row cannot be frozen, sealed or made non-extensible; its fields stay writable'); },
            };
            const V = Symbol(), T = Symbol(), S = Symbol(), G = Symbol();
            const internal = (key) => key === V || key === T || key === S || key === G;
            const oldHandler = {
                get(o, name, receiver) {
                    const k = eagerAt.get(name);
                    if (k !== undefined) return o[V][k];
                    const position = storedPosition(name);
                    if (position !== undefined) return readOriginal(o[T], o[S], o[G], position);
                    return internal(name) ? undefined : Reflect.get(o, name, receiver);
                },
                set(o, name, value) {
                    if (storedPosition(name) !== undefined) throw relata.error('old values are read-only');
                    return internal(name) || Reflect.set(o, name, value);
                },
                has(o, name) { return storedPosition(name) !== undefined || (!internal(name) && Reflect.has(o, name)); },
                deleteProperty(o, name) { return storedPosition(name) !== undefined || internal(name) || Reflect.deleteProperty(o, name); },
                ownKeys(o) {
                    const own = Reflect.ownKeys(o);
                    return own.length === 4 ? stored : stored.concat(own.filter((key) => !internal(key) && storedPosition(key) === undefined));
                },
                getOwnPropertyDescriptor(o, name) {
                    if (storedPosition(name) !== undefined) return described(this.get(o, name), false);
                    return internal(name) ? undefined : Reflect.getOwnPropertyDescriptor(o, name);
                },
            };
            return {
                row: (t, s, v) => new Proxy({ v, e: epoch[0], t, s }, rowHandler),
                old: (t, s, g, v) => new Proxy({ [V]: v, [T]: t, [S]: s, [G]: g }, oldHandler),
            };
        };
        """
}

/// The tables row proxies name by number (``RowProxies``), each with the placing of its rows
/// the number was given for: a table's rules take a new number when rows leave the table, so a
/// proxy kept from before reports that it is out of date instead of reading another row.
final class RowTables {
    private struct Entry {
        weak var table: DataTable?
        let positions: Int
    }
    private var entries: [Int: Entry] = [:]
    private var last = 0

    /// A new number for `table` as its rows are placed now.
    func register(_ table: DataTable) -> Int {
        last += 1
        entries[last] = Entry(table: table, positions: table.positionsGeneration)
        return last
    }

    /// Forgets a number: proxies that hold it report that they are out of date.
    func forget(_ number: Int) {
        entries[number] = nil
    }

    /// Whether `number` still names `table` as its rows are placed now.
    func isCurrent(_ number: Int, for table: DataTable) -> Bool {
        guard let entry = entries[number] else { return false }
        return entry.table === table && entry.positions == table.positionsGeneration
    }

    /// The row a proxy names.
    /// - Throws: when the table is gone, its rules detached, or its rows moved since the number was given.
    func row(table number: Int, position: Int, tableName: String) throws -> DataTableRow {
        guard let entry = entries[number], let table = entry.table, entry.positions == table.positionsGeneration,
              let row = table.row(atPosition: position) else {
            throw ScriptError(.runtime, "a row object of table \(tableName) was used after its table's rows changed place "
                              + "(rows were removed, or the rules were detached); a row object kept past its handler "
                              + "stays valid while the table's rows stay in place — keep the row's key and read it again with lda.select")
        }
        return row
    }
}

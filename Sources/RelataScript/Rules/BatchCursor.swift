internal import CJavaScriptCore
import Foundation
import Relata

/// Runs rule functions over many rows of one table with one call into
/// JavaScript per chunk of rows, instead of one per row.
///
/// The rows are seen through a *cursor*: an object with one accessor property
/// per field — and nothing else, so any field name a schema allows (`get`, `i`,
/// `constructor`, `__proto__`) works — whose accessors read and write shared
/// `Float64Array`s for the numeric, boolean and date fields the script mentions
/// (the JIT turns those into plain memory reads), and call back into Swift for
/// the others. The current row index lives in a closure no script can reach.
/// Writes are collected and applied, with validation, after the loop.
///
/// The cursor objects of a table in a script scope are made once and bound to each
/// batch's arrays (``CursorObjects``): the rules then see the same objects and the same
/// accessor functions batch after batch, which the JIT keeps inlined; objects made
/// afresh per batch made every batch slower than the one before.
final class BatchCursor {
    enum Kind: Equatable {
        case integer, number, boolean, date
        /// Read and written through Swift.
        case slow
    }

    let context: ScriptContext
    let table: DataTable
    let rows: RowSet
    /// Stored fields read through shared arrays, in the order of their arrays.
    let fastFields: [(name: String, kind: Kind)]
    private var current: [SharedColumn] = []
    private var originals: [SharedColumn] = []
    private var written: [SharedFlags] = []
    /// The cursor objects, bound to this batch until the cursor goes.
    private let objects: CursorObjects
    private let withOriginals: Bool

    /// Prepares a cursor over `rows`. `source` is the script text: only the fields it
    /// mentions get shared arrays. `withOriginals` adds an `old` cursor over the original values.
    /// The cursor objects come from `pool` when a batch of the same table and scope left them there.
    init(context: ScriptContext, table: DataTable, rows: RowSet, source: String, withOriginals: Bool, pool: SharedArrayPool) throws {
        self.context = context
        self.pool = pool
        self.table = table
        self.rows = rows
        self.withOriginals = withOriginals
        let fastFields = table.fields.compactMap { field -> (name: String, kind: Kind)? in
            let kind = Self.kind(of: field.type)
            guard kind != .slow, Self.mentions(source, field.name) else { return nil }
            return (field.name, kind)
        }
        self.fastFields = fastFields
        // Keyed by the factory's own text: tables alike in every way the cursor depends on share it.
        let source = Self.factorySource(table: table, fastFields: fastFields)
        objects = try pool.takeCursor(source, in: context)
            ?? CursorObjects(key: source, table: table.name, context: context, factory: context.generated(source) { source })
        current = fastFields.map { _ in pool.take(Double.self, count: rows.count, in: context) }
        written = fastFields.map { _ in pool.take(UInt8.self, count: rows.count, in: context, zeroed: true) }
        try table.copyNumbers(ofFields: fastFields.map(\.name), in: rows, into: current.map(\.buffer))
        if withOriginals {
            originals = fastFields.map { _ in pool.take(Double.self, count: rows.count, in: context) }
            try table.copyNumbers(ofFields: fastFields.map(\.name), in: rows, originals: true, into: originals.map(\.buffer))
        }
        let rows = self.rows
        let writes = slowWrites
        func row(at value: JSValueRef, in context: ScriptContext) throws -> DataTableRow {
            guard let index = context.index(from: value, count: rows.count) else {
                throw ScriptError(.runtime, "the row cursor is not on a row")
            }
            return rows[index]
        }
        // get(i, name): a field's value; with a null name, the row itself (for `lda`).
        let getter: NativeFunction.Body = { context, _, arguments in
            guard arguments.count == 2 else { throw ScriptError(.runtime, "the row cursor was called wrongly") }
            let row = try row(at: arguments[0], in: context)
            if JSValueIsNull(context.ref, arguments[1]) { return RowObject.make(row, in: context) }
            let name = JSString.string(of: arguments[1], in: context.ref) ?? ""
            if let index = context.integer(from: arguments[0]), let written = writes.values[index]?[name] { return context.jsValue(written) }
            return context.jsValue(try row.value(forKey: name))
        }
        let setter: NativeFunction.Body = { context, _, arguments in
            guard arguments.count == 3, let index = context.index(from: arguments[0], count: rows.count) else {
                throw ScriptError(.runtime, "the row cursor was called wrongly")
            }
            let name = JSString.string(of: arguments[1], in: context.ref) ?? ""
            let row = rows[index]
            guard let field = row.table.field(named: name) else {
                if row.table.virtualFieldNames.contains(where: { $0.equalsIgnoringCase(name) }) {
                    throw ScriptError(.runtime, "\(row.table.name).\(name): calculated and lookup fields cannot be set")
                }
                _ = try row.value(forKey: name)   // throws the unknown-field error
                return JSValueMakeUndefined(context.ref)
            }
            // The errors a row object's write gives, word for word, so both paths give one verdict.
            func refused(_ code: RelataError.Code, _ message: String) -> RelataError {
                RelataError(code, message, table: row.table.name, field: field.name, row: row.label)
            }
            if field.autoIncrement { throw refused(.readOnlyField, "the field is auto-increment; the data source assigns its value") }
            if field.readOnly { throw refused(.readOnlyField, "the field is read-only") }
            let value: Value
            do {
                value = try field.validate(context.value(from: arguments[2], for: field.type))
            } catch let error as ScriptError {
                throw ScriptError(.runtime, "\(row.table.name).\(name): \(error.message)")
            } catch let error as RelataError {
                throw refused(error.code, error.message)
            }
            writes.values[index, default: [:]][field.name] = value
            return context.jsValue(value)
        }
        let originalGetter: NativeFunction.Body = { context, _, arguments in
            guard arguments.count == 2 else { throw ScriptError(.runtime, "the row cursor was called wrongly") }
            let row = try row(at: arguments[0], in: context)
            let name = JSString.string(of: arguments[1], in: context.ref) ?? ""
            return context.jsValue(row.originalValue(forKey: name) ?? .null)
        }
        let arrays = { (columns: [any SharedArrayProtocol]) in context.makeArray(columns) { $0.array } }
        let (current, written, originals) = (self.current, self.written, self.originals)
        // Every stored property is set by now: if binding throws, deinit gives all back.
        _ = try context.call(objects.bind) { arguments in
            arguments.append(arrays(current))
            arguments.append(arrays(written))
            arguments.append(withOriginals ? arrays(originals) : JSValueMakeNull(context.ref))
            arguments.append(NativeFunction.make(in: context, getter))
            arguments.append(NativeFunction.make(in: context, setter))
            arguments.append(NativeFunction.make(in: context, originalGetter))
        }
    }

    /// Values written through Swift (fields without a shared array), by row index.
    private let slowWrites = WriteLog()

    final class WriteLog {
        var values: [Int: [String: Value]] = [:]
    }

    private let pool: SharedArrayPool

    deinit {
        // Unbound before they wait for the next batch: the natives hold this batch's rows.
        _ = try? context.call(objects.bind, [])
        pool.recycleCursor(objects, context: context)
        pool.recycle(current + originals, context: context)
        pool.recycle(written, context: context)
    }

    /// The cursor (`row` in the handlers).
    var cursor: JSObjectRef { objects.row }

    /// The arguments a generated loop takes before its own: the cursor, `old` (or null), `at` and `index`.
    var loopArguments: [JSValueRef] {
        [objects.row, withOriginals ? objects.old : JSValueMakeNull(context.ref), objects.moveTo, objects.position]
    }

    /// The row the cursor is on (where a stopped loop stopped), within `0..<rows.count`.
    func currentIndex() -> Int {
        guard let value = try? context.call(objects.position, []) else { return max(rows.count - 1, 0) }
        return context.index(from: value, count: rows.count) ?? max(rows.count - 1, 0)
    }

    /// The values the rules wrote, by row index (rows in `excluded` left out), ready to apply.
    func writes(excluding excluded: Set<Int>) -> [Int: [String: Value]] {
        var result = slowWrites.values
        for index in excluded { result[index] = nil }
        for (position, field) in fastFields.enumerated() {
            let flags = written[position].buffer, values = current[position].buffer
            for index in 0..<rows.count where flags[index] != 0 && !excluded.contains(index) {
                result[index, default: [:]][field.name] = Self.value(values[index], kind: field.kind)
            }
        }
        return result
    }

    // MARK: Helpers

    static func kind(of type: DataType) -> Kind {
        switch type.storage {
        case .integer: return .integer
        case .double, .decimal: return .number
        case .boolean: return .boolean
        case .date: return .date
        case .string, .guid, .blob: return .slow
        }
    }

    /// Whether a script's text names a field (as a whole word).
    static func mentions(_ source: String, _ name: String) -> Bool {
        var searchRange = source.startIndex..<source.endIndex
        while let found = source.range(of: name, range: searchRange) {
            let before = found.lowerBound == source.startIndex ? nil : source[source.index(before: found.lowerBound)]
            let after = found.upperBound == source.endIndex ? nil : source[found.upperBound]
            let isWordCharacter = { (character: Character?) in character.map { $0.isLetter || $0.isNumber || $0 == "_" } ?? false }
            if !isWordCharacter(before) && !isWordCharacter(after) { return true }
            searchRange = found.upperBound..<source.endIndex
        }
        return false
    }

    static func value(_ number: Double, kind: Kind) -> Value {
        if number.isNaN { return .null }
        switch kind {
        case .integer: return Int64(exactly: number).map(Value.integer) ?? .double(number)
        case .boolean: return .boolean(number != 0)
        case .date: return Date(javaScriptTime: number).map(Value.date) ?? .null
        case .number, .slow: return .double(number)
        }
    }

    /// The JavaScript source of the cursor factory for a table and its fast fields:
    /// `function ()` returning `{ row, old, at, index, bind }`, where
    /// `bind(c, w, oc, get, set, oget)` points the cursors at a batch's shared arrays
    /// (current values, written flags, originals or null) and Swift's accessors, and
    /// `bind()` lets them go. Field names only ever appear as quoted property keys.
    static func factorySource(table: DataTable, fastFields: [(name: String, kind: Kind)]) -> String {
        let fast = Dictionary(fastFields.enumerated().map { ($1.name, ($0, $1.kind)) }, uniquingKeysWith: { first, _ in first })
        // Dates are made with the engine's own constructor: a time value needs no call through the UTC wrapper.
        var lines = ["function () {", "const ended = function () { throw relata.error('the row cursor was used after its batch ended'); };",
                     "const gone = new Proxy({}, { get: ended, set: ended });",
                     "let i = 0, get = ended, set = ended, oget = ended;", "const NativeDate = relata.NativeDate;",
                     // NULL (NaN in the arrays) is read through a call: while a batch has no NULL the call
                     // never runs, and the JIT compiles the getters to return plain numbers — with a literal
                     // `null` there every read was a boxed value.
                     "const none = function () { return null; };"]
        var binds: [String] = []
        for index in fastFields.indices {
            lines.append("let c\(index) = gone, w\(index) = gone, o\(index) = gone;")
            binds.append("c\(index) = c ? c[\(index)] : gone; w\(index) = w ? w[\(index)] : gone; o\(index) = oc ? oc[\(index)] : gone;")
        }
        lines.append("const row = Object.create(relata.rowPrototype(() => i, (n, name) => get(n, name), (n, name, v) => set(n, name, v))), old = {};")
        lines.append("const readOnly = function (v) { throw relata.error('old values are read-only'); };")
        lines.append("const define = (object, name, get, set) => Object.defineProperty(object, name, { enumerable: true, get, set });")
        let stored = Set(table.fields.map(\.name))
        for name in table.fields.map(\.name) + table.virtualFieldNames {
            let key = name.scriptLiteral
            if let (index, kind) = fast[name] {
                // A value of another type goes through Swift's setter, which refuses it with a row object's
                // words or converts it as a row object would (a string for a decimal); the result is stored here.
                let convert = "v = set(i, \(key), v);"
                let read: String
                let check: String
                switch kind {
                case .integer:
                    read = "v"
                    check = "if (typeof v !== 'number' || !Number.isInteger(v)) \(convert) if (v === 0) v = 0;"
                case .number, .slow:
                    // NaN and the infinities go to Swift's setter, which refuses them as a row object does; -0 is 0.
                    read = "v"
                    check = "if (typeof v !== 'number' || !isFinite(v)) \(convert) if (v === 0) v = 0;"
                case .boolean:
                    read = "v === 1"
                    check = "if (typeof v !== 'boolean') \(convert) v = v ? 1 : 0;"
                case .date:
                    read = "new NativeDate(v)"
                    check = "if (!(v instanceof Date) || isNaN(v.getTime())) \(convert) v = v.getTime();"
                }
                // Writes Swift must refuse (read-only, auto-increment, NULL in a required field) go to it too.
                let field = table.field(named: name)
                let setter = field.map { $0.readOnly || $0.autoIncrement } == true
                    ? "function (v) { set(i, \(key), v); }"
                    : "function (v) { if (v === null || v === undefined) { \(field?.required == true ? "set(i, \(key), null);" : "v = NaN;") } "
                        + "else { \(check) } c\(index)[i] = v; w\(index)[i] = 1; }"
                lines.append("define(row, \(key), function () { const v = c\(index)[i]; return v !== v ? none() : \(read); }, \(setter));")
                lines.append("define(old, \(key), function () { const v = o\(index)[i]; return v !== v ? none() : \(read); }, readOnly);")
            } else {
                lines.append("define(row, \(key), function () { return get(i, \(key)); }, function (v) { set(i, \(key), v); });")
                if stored.contains(name) {
                    lines.append("define(old, \(key), function () { return oget(i, \(key)); }, readOnly);")
                }
            }
        }
        lines.append("Object.preventExtensions(old);")
        lines.append("relata.cursors.set(row, () => get(i, null));")
        lines.append("const bind = function (c, w, oc, g, s, og) {")
        lines.append(contentsOf: binds)
        lines.append("get = g || ended; set = s || ended; oget = og || ended; i = 0;")
        lines.append("};")
        lines.append("return { row, old, at(n) { i = n; }, index() { return i; }, bind };")
        lines.append("}")
        return lines.joined(separator: "\n")
    }
}

/// The cursor objects of one table in one script scope (`row`, `old` and their
/// functions), made once by the generated factory and bound to batch after batch.
final class CursorObjects {
    let key: String
    let row: JSObjectRef
    let old: JSObjectRef
    let moveTo: JSObjectRef
    let position: JSObjectRef
    let bind: JSObjectRef
    private let handle: JSObjectRef
    private let context: ScriptContext

    init(key: String, table: String, context: ScriptContext, factory: JSObjectRef) throws {
        let made = try context.call(factory, [])
        func object(_ value: JSValueRef?) -> JSObjectRef? { value.flatMap { JSValueToObject(context.ref, $0, nil) } }
        guard let handle = object(made), let row = object(context.property("row", of: handle)),
              let old = object(context.property("old", of: handle)), let moveTo = object(context.property("at", of: handle)),
              let position = object(context.property("index", of: handle)), let bind = object(context.property("bind", of: handle)) else {
            throw ScriptError(.runtime, "could not build the row cursor of table \(table)")
        }
        (self.key, self.context, self.handle) = (key, context, handle)
        (self.row, self.old, self.moveTo, self.position, self.bind) = (row, old, moveTo, position, bind)
        JSValueProtect(context.ref, handle)
    }

    deinit { JSValueUnprotect(context.ref, handle) }
}

/// A typed array over memory Swift allocated; JavaScriptCore frees it when the array is collected.
/// The array is protected while this object lives, so Swift may read and write the buffer meanwhile.
final class SharedArray<Element: SharedArrayElement>: SharedArrayProtocol {
    let buffer: UnsafeMutableBufferPointer<Element>
    let array: JSObjectRef
    private let context: ScriptContext

    init(count: Int, in context: ScriptContext, zeroed: Bool = false) {
        self.context = context
        let size = MemoryLayout<Element>.stride
        let raw = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1) * size, alignment: 16)
        buffer = UnsafeMutableBufferPointer(start: raw.bindMemory(to: Element.self, capacity: max(count, 1)), count: count)
        if zeroed { raw.initializeMemory(as: UInt8.self, repeating: 0, count: count * size) }
        array = JSObjectMakeTypedArrayWithBytesNoCopy(context.ref, Element.typedArrayType, raw, count * size,
                                                     { bytes, _ in bytes?.deallocate() }, nil, nil)
        JSValueProtect(context.ref, array)
    }

    deinit { JSValueUnprotect(context.ref, array) }
}

/// A `Float64Array` shared with JavaScript: numeric column values.
typealias SharedColumn = SharedArray<Double>
/// A `Uint8Array` shared with JavaScript: one flag per row.
typealias SharedFlags = SharedArray<UInt8>

protocol SharedArrayProtocol { var array: JSObjectRef { get } }

protocol SharedArrayElement: BitwiseCopyable { static var typedArrayType: JSTypedArrayType { get } }
extension Double: SharedArrayElement { static var typedArrayType: JSTypedArrayType { kJSTypedArrayTypeFloat64Array } }
extension UInt8: SharedArrayElement { static var typedArrayType: JSTypedArrayType { kJSTypedArrayTypeUint8Array } }

internal import CJavaScriptCore
import Foundation
import Relata

/// Runs rule functions over many rows of one table with one call into
/// JavaScript per chunk of rows, instead of one per row.
///
/// The rows are seen through a *cursor*: an object of a class generated for
/// the table, whose field accessors read and write shared `Float64Array`s for
/// the numeric, boolean and date fields the script mentions (the JIT turns
/// those into plain memory reads), and call back into Swift for the others.
/// Writes are collected and applied, with validation, after the loop.
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
    let cursor: JSObjectRef
    let oldCursor: JSObjectRef?

    /// Prepares a cursor over `rows`. `source` is the script text: only the fields it
    /// mentions get shared arrays. `withOriginals` adds an `old` cursor over the original values.
    init(context: ScriptContext, table: DataTable, rows: RowSet, source: String, withOriginals: Bool, pool: SharedArrayPool,
         classes: (DataTable, [(name: String, kind: Kind)], ScriptContext) throws -> (row: JSObjectRef, old: JSObjectRef)) throws {
        self.context = context
        self.pool = pool
        self.table = table
        self.rows = rows
        fastFields = table.fields.compactMap { field in
            let kind = Self.kind(of: field.type)
            guard kind != .slow, Self.mentions(source, field.name) else { return nil }
            return (field.name, kind)
        }
        let (rowClass, oldClass) = try classes(table, fastFields, context)
        current = fastFields.map { _ in pool.take(Double.self, count: rows.count, in: context) }
        written = fastFields.map { _ in pool.take(UInt8.self, count: rows.count, in: context, zeroed: true) }
        try table.copyNumbers(ofFields: fastFields.map(\.name), in: rows, into: current.map(\.buffer))
        if withOriginals {
            originals = fastFields.map { _ in pool.take(Double.self, count: rows.count, in: context) }
            try table.copyNumbers(ofFields: fastFields.map(\.name), in: rows, originals: true, into: originals.map(\.buffer))
        }
        let rows = self.rows
        let writes = slowWrites
        let getter = NativeFunction.make(in: context) { context, _, arguments in
            let index = Int(JSValueToNumber(context.ref, arguments[0], nil))
            let name = JSString.string(of: arguments[1], in: context.ref) ?? ""
            if name == "-row" { return RowObject.make(rows[index], in: context) }
            if let written = writes.values[index]?[name] { return context.jsValue(written) }
            return context.jsValue(try rows[index].value(forKey: name))
        }
        let setter = NativeFunction.make(in: context) { context, _, arguments in
            let index = Int(JSValueToNumber(context.ref, arguments[0], nil))
            let name = JSString.string(of: arguments[1], in: context.ref) ?? ""
            let row = rows[index]
            guard let field = row.table.field(named: name) else {
                if row.table.virtualFieldNames.contains(where: { $0.caseInsensitiveCompare(name) == .orderedSame }) {
                    throw ScriptError(.runtime, "\(row.table.name).\(name): calculated and lookup fields cannot be set")
                }
                _ = try row.value(forKey: name)   // throws the unknown-field error
                return JSValueMakeUndefined(context.ref)
            }
            if field.readOnly || field.autoIncrement {
                throw ScriptError(.runtime, "\(row.table.name).\(field.name), \(row.label): the field is read-only")
            }
            let value: Value
            do {
                value = try field.validate(context.value(from: arguments[2], for: field.type))
            } catch let error as RelataError {
                throw ScriptError(.runtime, "\(row.table.name).\(field.name), \(row.label): \(error.message)")
            }
            writes.values[index, default: [:]][field.name] = value
            return JSValueMakeUndefined(context.ref)
        }
        let arrays = { (columns: [any SharedArrayProtocol]) in context.makeArray(columns.map { $0.array }) }
        cursor = try Self.construct(rowClass, [arrays(current), arrays(written), getter, setter], in: context)
        if withOriginals {
            let originalGetter = NativeFunction.make(in: context) { context, _, arguments in
                let index = Int(JSValueToNumber(context.ref, arguments[0], nil))
                let name = JSString.string(of: arguments[1], in: context.ref) ?? ""
                return context.jsValue(rows[index].originalValue(forKey: name) ?? .null)
            }
            oldCursor = try Self.construct(oldClass, [arrays(originals), originalGetter], in: context)
        } else {
            oldCursor = nil
        }
        JSValueProtect(context.ref, cursor)
        if let oldCursor { JSValueProtect(context.ref, oldCursor) }
    }

    /// Values written through Swift (fields without a shared array), by row index.
    private let slowWrites = WriteLog()

    final class WriteLog {
        var values: [Int: [String: Value]] = [:]
    }

    private let pool: SharedArrayPool

    deinit {
        pool.recycle(current + originals, context: context)
        pool.recycle(written, context: context)
        JSValueUnprotect(context.ref, cursor)
        if let oldCursor { JSValueUnprotect(context.ref, oldCursor) }
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
        case .date: return .date(Date(timeIntervalSince1970: number))
        case .number, .slow: return .double(number)
        }
    }

    private static func construct(_ constructor: JSObjectRef, _ arguments: [JSValueRef], in context: ScriptContext) throws -> JSObjectRef {
        var exception: JSValueRef?
        let arguments = arguments.map { Optional($0) }
        let object = arguments.withUnsafeBufferPointer {
            JSObjectCallAsConstructor(context.ref, constructor, $0.count, $0.baseAddress, &exception)
        }
        if let exception { throw context.error(from: exception, file: nil) }
        return object!
    }

    /// The JavaScript source of the cursor classes for a table and its fast fields.
    static func classSource(table: DataTable, fastFields: [(name: String, kind: Kind)]) -> String {
        func quoted(_ text: String) -> String {
            let data = try? JSONSerialization.data(withJSONObject: [text])
            return String(decoding: data ?? Data("[\"\"]".utf8), as: UTF8.self).dropFirst().dropLast().description
        }
        let fast = Dictionary(uniqueKeysWithValues: fastFields.enumerated().map { ($1.name, ($0, $1.kind)) })
        var row = ["constructor(c, w, get, set) { this.i = 0; this.get = get; this.set = set; "
            + fastFields.indices.map { "this.c\($0) = c[\($0)]; this.w\($0) = w[\($0)];" }.joined(separator: " ") + " }"]
        var old = ["constructor(c, get) { this.i = 0; this.get = get; "
            + fastFields.indices.map { "this.c\($0) = c[\($0)];" }.joined(separator: " ") + " }"]
        for name in table.fields.map(\.name) + table.virtualFieldNames {
            let key = quoted(name)
            let label = quoted("\(table.name).\(name): ")
            if let (index, kind) = fast[name] {
                let read: String
                let check: String
                switch kind {
                case .integer:
                    read = "v"
                    check = "if (typeof v !== 'number' || !Number.isInteger(v)) throw __relataError(\(label) + String(v) + ' is not a valid integer value');"
                case .number, .slow:
                    read = "v"
                    check = "if (typeof v !== 'number') throw __relataError(\(label) + String(v) + ' is not a valid number');"
                case .boolean:
                    read = "v === 1"
                    check = "if (typeof v !== 'boolean') throw __relataError(\(label) + String(v) + ' is not a valid boolean value'); v = v ? 1 : 0;"
                case .date:
                    read = "new Date(v * 1000)"
                    check = "if (!(v instanceof Date)) throw __relataError(\(label) + String(v) + ' is not a Date'); v = v.getTime() / 1000;"
                }
                let getter = "get [\(key)]() { const v = this.c\(index)[this.i]; return v !== v ? null : \(read); }"
                row.append(getter)
                row.append("set [\(key)](v) { if (v === null || v === undefined) v = NaN; else { \(check) } this.c\(index)[this.i] = v; this.w\(index)[this.i] = 1; }")
                old.append(getter)
            } else {
                row.append("get [\(key)]() { return this.get(this.i, \(key)); }")
                row.append("set [\(key)](v) { this.set(this.i, \(key), v); }")
                old.append("get [\(key)]() { return this.get(this.i, \(key)); }")
            }
            old.append("set [\(key)](v) { throw __relataError('old values are read-only'); }")
        }
        row.append("get __relataRow() { return this.get(this.i, '-row'); }")
        return "[class \(table.name.filter { $0.isLetter || $0.isNumber })Row {\n  \(row.joined(separator: "\n  "))\n}, class Old {\n  \(old.joined(separator: "\n  "))\n}]"
    }
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

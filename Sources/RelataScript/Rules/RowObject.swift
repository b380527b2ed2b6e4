internal import CJavaScriptCore
import Foundation
import Relata

/// The JavaScript face of a ``DataTableRow``: `row.Quantity`, `row['Quantity']`,
/// `Object.keys(row)`, `JSON.stringify(row)`. Reads include calculated and lookup
/// fields; writes go through the same validation as Swift writes, and an invalid
/// write or an unknown field name throws in JavaScript (reading one too, and so
/// does `'Misspelt' in row`: check `schema.Orders.fields` to ask what exists).
enum RowObject {
    final class Box {
        let row: DataTableRow
        /// Not kept alive: a row object may outlive the rules that made it (a script can keep it).
        private let back: BackReference<ScriptContext>
        var context: ScriptContext? { back.object }
        init(row: DataTableRow, context: ScriptContext) {
            self.row = row
            back = context.back
        }
    }

    static func make(_ row: DataTableRow, in context: ScriptContext) -> JSObjectRef {
        JSObjectMake(context.ref, rowClass, Unmanaged.passRetained(Box(row: row, context: context)).toOpaque())
    }

    /// The row behind a JavaScript value made by ``make(_:in:)``, or nil.
    static func row(of value: JSValueRef, in context: ScriptContext) -> DataTableRow? {
        guard JSValueIsObjectOfClass(context.ref, value, rowClass), let object = JSValueToObject(context.ref, value, nil),
              let pointer = JSObjectGetPrivate(object) else { return nil }
        return Unmanaged<Box>.fromOpaque(pointer).takeUnretainedValue().row
    }

    static func isRow(_ value: JSValueRef, in context: ScriptContext) -> Bool {
        JSValueIsObjectOfClass(context.ref, value, rowClass)
    }

    /// Names JavaScript itself asks objects for; they are not field lookups.
    /// (The batch cursor's prototype, `relata.rowPrototype`, is given the same names.)
    static let languageNames: Set<String> = [
        "toJSON", "toString", "valueOf", "constructor", "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable",
        "toLocaleString", "then", "__proto__", "__defineGetter__", "__defineSetter__", "__lookupGetter__", "__lookupSetter__",
        "length", "inspect",
        // JavaScriptCore hands a class's callbacks a symbol's description as its name.
        "Symbol.toPrimitive", "Symbol.toStringTag", "Symbol.iterator", "Symbol.asyncIterator", "Symbol.hasInstance",
        "Symbol.isConcatSpreadable", "Symbol.species", "Symbol.unscopables", "Symbol.match", "Symbol.matchAll",
        "Symbol.replace", "Symbol.search", "Symbol.split",
    ]

    /// What reading `name` from a row object gives: a field's value (any case, calculated and lookup
    /// fields too), or nil for a name JavaScript itself asks objects for (``languageNames``) that
    /// is no field. The one reading of a name that is not a stored field's exactly, for row objects
    /// and the row proxies of row events (``RowProxies``) alike.
    /// - Throws: ``AccessError``: the unknown field's, or what a calculated field's function threw.
    static func read(_ name: String, of row: DataTableRow, in context: ScriptContext) throws(AccessError) -> JSValueRef? {
        defer { context.bumpEpoch() }   // a calculated field's function may change what scripts read
        do {
            return context.jsValue(try row.value(forKey: name))
        } catch let error as RelataError where error.code == .unknownField && languageNames.contains(name) {
            return nil
        } catch {
            throw AccessError(description: "\(error)")
        }
    }

    /// Writes `value` to the field `name` names, checked as a Swift write is; the one writing of
    /// a field for row objects and the row proxies of row events alike.
    /// - Throws: the ``RelataError`` of a value that does not fit, or an ``AccessError`` naming
    ///   the table and field.
    static func write(_ value: JSValueRef, named name: String, to row: DataTableRow, in context: ScriptContext) throws {
        defer { context.bumpEpoch() }
        do {
            try row.setValue(try context.value(from: value, for: row.table.field(named: name)?.type), forKey: name)
        } catch let error as ScriptError {
            throw AccessError(description: "\(row.table.name).\(name): \(error.message)")
        } catch let error as RelataError {
            throw error
        } catch {
            throw AccessError(description: "\(error)")
        }
    }

    /// An error of reading or writing a row that scripts see as a plain `Error` of this message
    /// (a native function's caller makes it so, as ``jsError(_:in:)`` does).
    struct AccessError: Error, CustomStringConvertible {
        let description: String
    }

    /// The JavaScript error for what ``read(_:of:in:)`` or ``write(_:named:to:in:)`` threw.
    static func jsError(_ error: any Error, in context: ScriptContext) -> JSValueRef {
        if let error = error as? RelataError { return context.makeError(error) }
        return context.makeError("\(error)")
    }

    private static func box(_ object: JSObjectRef?) -> Box? {
        guard let object, let pointer = JSObjectGetPrivate(object) else { return nil }
        return Unmanaged<Box>.fromOpaque(pointer).takeUnretainedValue()
    }

    private static func fieldNames(of table: DataTable) -> [String] {
        table.fields.map(\.name) + table.virtualFieldNames
    }

    // Created once and never changed; JavaScriptCore classes may be used from any thread.
    nonisolated(unsafe) private static let rowClass: JSClassRef = {
        var definition = kJSClassDefinitionEmpty
        definition.className = UnsafePointer(strdup("DataTableRow"))
        // Object.prototype directly, with no prototype of the class's own in between: the class
        // has no static functions to keep there, and setting one on each new object was a fifth
        // of making it (an object is made per row per call).
        definition.attributes = JSClassAttributes(kJSClassAttributeNoAutomaticPrototype)
        definition.getProperty = { calling, object, name, exception in
            guard let calling, let box = box(object), let name else { return nil }
            // A stored field named exactly (the usual read): no Swift string made, and the value
            // made in the calling context, so the rules' context is loaded only for the rest.
            if let field = JSString.exactMatch(name, in: box.row.table.fieldNames) {
                return ScriptContext.jsValue(box.row.value(at: field), in: calling)
            }
            guard let context = box.context else { return nil }
            do {
                return try read(JSString.string(name), of: box.row, in: context)
            } catch {
                exception?.pointee = jsError(error, in: context)
                return nil
            }
        }
        definition.setProperty = { _, object, name, value, exception in
            guard let box = box(object), let context = box.context, let name, let value else { return false }
            do {
                try write(value, named: JSString.string(name), to: box.row, in: context)
            } catch {
                exception?.pointee = jsError(error, in: context)
            }
            return true
        }
        // No hasProperty callback: JavaScriptCore then asks getProperty, which
        // is what makes reading a misspelt field an error instead of undefined.
        definition.deleteProperty = { _, object, name, exception in
            guard let box = box(object), let context = box.context else { return false }
            exception?.pointee = context.makeError("fields cannot be deleted from a row; set them to null instead")
            return true
        }
        definition.getPropertyNames = { _, object, names in
            guard let box = box(object), let names else { return }
            for field in fieldNames(of: box.row.table) {
                JSString.with(field) { JSPropertyNameAccumulatorAddName(names, $0) }
            }
        }
        definition.finalize = { object in
            guard let object, let pointer = JSObjectGetPrivate(object) else { return }
            Unmanaged<Box>.fromOpaque(pointer).release()
        }
        return JSClassCreate(&definition)
    }()
}

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
    /// - Throws: when the row has left its table since (a row object a script kept).
    static func row(of value: JSValueRef, in context: ScriptContext) throws -> DataTableRow? {
        guard JSValueIsObjectOfClass(context.ref, value, rowClass), let object = JSValueToObject(context.ref, value, nil),
              let pointer = JSObjectGetPrivate(object) else { return nil }
        let row = Unmanaged<Box>.fromOpaque(pointer).takeUnretainedValue().row
        guard row.isInTable else { throw ScriptError(.runtime, removedMessage(row)) }
        return row
    }

    /// What a row object of a row that has left its table says when it is used: a script kept it
    /// past its handler, and the row was removed since (a deletion applied, an addition cancelled).
    static func removedMessage(_ row: DataTableRow) -> String {
        "a row object of table \(row.table.name) was used after its row was removed from the table "
            + "(a deletion applied or an addition cancelled); keep the row's key and read it again with lda.select"
    }

    private static func refuseRemoved(_ box: Box, _ exception: UnsafeMutablePointer<JSValueRef?>?) {
        if let context = box.context { exception?.pointee = context.makeError(removedMessage(box.row)) }
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
        // JavaScriptCore hands a class's callbacks a symbol's description as its name: without
        // these, `String(row)` and `${row}` asked for the field 'Symbol.toPrimitive' and threw.
        "Symbol.toPrimitive", "Symbol.toStringTag", "Symbol.iterator", "Symbol.asyncIterator", "Symbol.hasInstance",
        "Symbol.isConcatSpreadable", "Symbol.species", "Symbol.unscopables", "Symbol.match", "Symbol.matchAll",
        "Symbol.replace", "Symbol.search", "Symbol.split",
    ]

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
            guard box.row.isInTable else {
                refuseRemoved(box, exception)
                return nil
            }
            // A stored field named exactly (the usual read): no Swift string made, and the value
            // made in the calling context, so the rules' context is loaded only for the rest.
            if let field = JSString.exactMatch(name, in: box.row.table.fieldNames) {
                return ScriptContext.jsValue(box.row.value(at: field), in: calling)
            }
            guard let context = box.context else { return nil }
            let key = JSString.string(name)
            do {
                return context.jsValue(try box.row.value(forKey: key))
            } catch let error as RelataError where error.code == .unknownField {
                if languageNames.contains(key) { return nil }
                exception?.pointee = context.makeError(error.description)
            } catch {
                exception?.pointee = context.makeError("\(error)")
            }
            return nil
        }
        definition.setProperty = { _, object, name, value, exception in
            guard let box = box(object), let context = box.context, let name, let value else { return false }
            guard box.row.isInTable else {
                refuseRemoved(box, exception)
                return true
            }
            let key = JSString.string(name)
            do {
                let type = box.row.table.field(named: key)?.type
                try box.row.setValue(try context.value(from: value, for: type), forKey: key)
            } catch let error as ScriptError {
                exception?.pointee = context.makeError("\(box.row.table.name).\(key): \(error.message)")
            } catch let error as RelataError {
                exception?.pointee = context.makeError(error)
            } catch {
                exception?.pointee = context.makeError("\(error)")
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

internal import CJavaScriptCore
import Foundation
import Relata

/// The `old` of `beforeUpdate(row, old)`: a row's original values as they were when the
/// handler was called, read-only. `old.Quantity`, `old['Quantity']`, `Object.keys(old)`
/// and `JSON.stringify(old)` work as on a plain object of the stored fields; a name that
/// is not a field reads `undefined`; writing a field throws `old values are read-only`, and
/// deleting one leaves it (as on the batch path's `old`).
///
/// Made without calling into JavaScript (an object of a class whose reads call back into
/// Swift), so a row's update costs one entry into JavaScript, not two.
enum OriginalValuesObject {
    final class Box {
        /// The table's field names (shared with it, not copied), and their original values in order.
        let fields: [String]
        let values: [Value]
        /// Not kept alive: the object may outlive the rules that made it (a script can keep it).
        private let back: BackReference<ScriptContext>
        var context: ScriptContext? { back.object }
        init(fields: [String], values: [Value], context: ScriptContext) {
            self.fields = fields
            self.values = values
            back = context.back
        }

        /// The original value of the field `name` names (exactly), or nil for a name that is no field.
        func value(named name: JSStringRef) -> Value? {
            if let field = JSString.exactMatch(name, in: fields) { return values[field] }
            // Names equal as Swift compares them (canonically equivalent) but not byte for byte.
            let key = JSString.string(name)
            return fields.firstIndex { $0 == key }.map { values[$0] }
        }
    }

    /// The original values of `row`'s stored fields (null for each of an added row).
    static func make(_ row: DataTableRow, in context: ScriptContext) -> JSObjectRef {
        let box = Box(fields: row.table.fieldNames, values: row.originalValues, context: context)
        return JSObjectMake(context.ref, objectClass, Unmanaged.passRetained(box).toOpaque())
    }

    private static func readOnly(_ object: JSObjectRef?, _ name: JSStringRef?, _ exception: UnsafeMutablePointer<JSValueRef?>?) -> Bool {
        guard let box = box(object), let context = box.context, let name, box.value(named: name) != nil else { return false }
        exception?.pointee = context.makeError("old values are read-only")
        return true
    }

    private static func box(_ object: JSObjectRef?) -> Box? {
        guard let object, let pointer = JSObjectGetPrivate(object) else { return nil }
        return Unmanaged<Box>.fromOpaque(pointer).takeUnretainedValue()
    }

    // Created once and never changed; JavaScriptCore classes may be used from any thread.
    nonisolated(unsafe) private static let objectClass: JSClassRef = {
        var definition = kJSClassDefinitionEmpty
        definition.className = UnsafePointer(strdup("OriginalValues"))
        // Object.prototype directly, with no prototype of the class's own in between: the class
        // has no static functions to keep there, and setting one on each new object was a fifth
        // of making it (an object is made per row per call).
        definition.attributes = JSClassAttributes(kJSClassAttributeNoAutomaticPrototype)
        definition.hasProperty = { _, object, name in
            guard let box = box(object), let name else { return false }
            return box.value(named: name) != nil
        }
        // A name that is no field falls through (nil) to the prototype: `undefined`, or Object's own.
        // The value is made in the calling context: reading one needs no ``ScriptContext``.
        definition.getProperty = { calling, object, name, _ in
            guard let calling, let box = box(object), let name, let value = box.value(named: name) else { return nil }
            return ScriptContext.jsValue(value, in: calling)
        }
        // Other names are the object's own to keep (false: JavaScriptCore stores them as usual).
        definition.setProperty = { _, object, name, _, exception in readOnly(object, name, exception) }
        definition.getPropertyNames = { _, object, names in
            guard let box = box(object), let names else { return }
            for field in box.fields { JSString.with(field) { JSPropertyNameAccumulatorAddName(names, $0) } }
        }
        definition.finalize = { object in
            guard let object, let pointer = JSObjectGetPrivate(object) else { return }
            Unmanaged<Box>.fromOpaque(pointer).release()
        }
        return JSClassCreate(&definition)
    }()
}

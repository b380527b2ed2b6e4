internal import CJavaScriptCore
import Relata

/// A delta as one script sees it: `delta.name`, `delta.count`, `delta[i]`, `delta.changes`.
final class DeltaView {
    let context: ScriptContext
    let object: JSObjectRef
    let changes: [JSObjectRef]

    init(delta: Delta, context: ScriptContext) throws {
        self.context = context
        let make = try context.helper("change")
        changes = try delta.changes.map { change in
            let names = Array(Set(change.oldValues.keys).union(change.newValues.keys)).sorted()
            let arguments: [JSValueRef] = [
                context.string(change.type.rawValue), JSValueMakeNumber(context.ref, Double(change.changeId)),
                context.makeArray(names.map { context.string($0) }),
                try context.object(from: change.oldValues), try context.object(from: change.newValues),
                context.string(change.status.rawValue), change.message.map { context.string($0) } ?? JSValueMakeNull(context.ref),
            ]
            guard let object = JSValueToObject(context.ref, try context.call(make, arguments), nil) else {
                throw ScriptError(.runtime, "could not show change \(change.changeId) of \(delta.tableName) to the rules")
            }
            return object
        }
        object = context.makeObject()
        context.setProperty("name", of: object, to: context.string(delta.tableName), readOnly: true)
        context.setProperty("count", of: object, to: JSValueMakeNumber(context.ref, Double(changes.count)), readOnly: true)
        context.setProperty("length", of: object, to: JSValueMakeNumber(context.ref, Double(changes.count)), readOnly: true)
        context.setProperty("changes", of: object, to: context.makeArray(changes), readOnly: true)
        for (index, change) in changes.enumerated() {
            JSObjectSetPropertyAtIndex(context.ref, object, UInt32(truncatingIfNeeded: index), change, nil)
        }
        JSValueProtect(context.ref, object)
    }

    deinit { JSValueUnprotect(context.ref, object) }

    /// Shows a change's new status and message to the script.
    func update(_ change: DeltaChange, at index: Int) {
        context.setProperty("status", of: changes[index], to: context.string(change.status.rawValue))
        context.setProperty("message", of: changes[index], to: change.message.map { context.string($0) } ?? JSValueMakeNull(context.ref))
    }
}

extension ScriptContext {
    /// A plain object of field values, keyed by field name (any name, `__proto__` included).
    func object(from values: [String: Value]) throws -> JSObjectRef {
        let sorted = values.sorted { $0.key < $1.key }
        let made = try call(helper("valuesObject"), [makeArray(sorted.map { string($0.key) }), makeArray(sorted.map { jsValue($0.value) })])
        guard let object = JSValueToObject(ref, made, nil) else { throw ScriptError(.runtime, "could not show field values to the rules") }
        return object
    }
}

internal import CJavaScriptCore
import Relata

/// A delta as one script sees it: `delta.name`, `delta.count`, `delta[i]`, `delta.changes`.
final class DeltaView {
    let context: ScriptContext
    let object: JSObjectRef
    /// The change objects, kept alive by ``kept``: a script may replace `delta[i]` or `delta.changes[i]`.
    let changes: [JSObjectRef]
    /// An array no script sees, holding every change object.
    private let kept: JSObjectRef

    init(delta: Delta, context: ScriptContext) throws {
        self.context = context
        let make = try context.helper("change")
        var changes: [JSObjectRef] = []
        changes.reserveCapacity(delta.changes.count)
        let kept = try context.makeArray(delta.changes) { change in
            let made = try context.call(make) { arguments in
                arguments.append(context.string(change.type.rawValue))
                arguments.append(JSValueMakeNumber(context.ref, Double(change.changeId)))
                arguments.append(context.makeArray(Set(change.oldValues.keys).union(change.newValues.keys).sorted()) { context.string($0) })
                arguments.append(try context.object(from: change.oldValues))
                arguments.append(try context.object(from: change.newValues))
                arguments.append(context.string(change.status.rawValue))
                arguments.append(change.message.map { context.string($0) } ?? JSValueMakeNull(context.ref))
            }
            guard let object = JSValueToObject(context.ref, made, nil) else {
                throw ScriptError(.runtime, "could not show change \(change.changeId) of \(delta.tableName) to the rules")
            }
            changes.append(object)
            return object
        }
        let object = context.makeObject()
        context.setProperty("name", of: object, to: context.string(delta.tableName), readOnly: true)
        context.setProperty("count", of: object, to: JSValueMakeNumber(context.ref, Double(changes.count)), readOnly: true)
        context.setProperty("length", of: object, to: JSValueMakeNumber(context.ref, Double(changes.count)), readOnly: true)
        context.setProperty("changes", of: object, to: context.makeArray(changes) { $0 }, readOnly: true)
        for (index, change) in zip(0..<UInt32.max, changes) {
            JSObjectSetPropertyAtIndex(context.ref, object, index, change, nil)
        }
        JSValueProtect(context.ref, kept)
        JSValueProtect(context.ref, object)
        self.kept = kept
        self.object = object
        self.changes = changes
    }

    deinit {
        JSValueUnprotect(context.ref, object)
        JSValueUnprotect(context.ref, kept)
    }

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
        let made = try call(helper("valuesObject")) { arguments in
            arguments.append(makeArray(sorted) { string($0.key) })
            arguments.append(makeArray(sorted) { jsValue($0.value) })
        }
        guard let object = JSValueToObject(ref, made, nil) else { throw ScriptError(.runtime, "could not show field values to the rules") }
        return object
    }
}

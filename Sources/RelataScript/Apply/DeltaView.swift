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
        // Protected as soon as it is made: it holds every change object.
        let kept = try Self.changeObjects(of: delta, in: context)
        var changes: [JSObjectRef] = []
        changes.reserveCapacity(delta.changes.count)
        for index in 0..<UInt32(delta.changes.count) {
            guard let change = JSValueToObject(context.ref, JSObjectGetPropertyAtIndex(context.ref, kept, index, nil), nil) else {
                JSValueUnprotect(context.ref, kept)
                throw ScriptError(.runtime, "could not show change \(delta.changes[Int(index)].changeId) of \(delta.tableName) to the rules")
            }
            changes.append(change)
        }
        let object = context.makeObject()
        context.setProperty("name", of: object, to: context.string(delta.tableName), readOnly: true)
        context.setProperty("count", of: object, to: JSValueMakeNumber(context.ref, Double(changes.count)), readOnly: true)
        context.setProperty("length", of: object, to: JSValueMakeNumber(context.ref, Double(changes.count)), readOnly: true)
        context.setProperty("changes", of: object, to: context.makeArray(changes) { $0 }, readOnly: true)
        for (index, change) in zip(0..<UInt32.max, changes) {
            JSObjectSetPropertyAtIndex(context.ref, object, index, change, nil)
        }
        JSValueProtect(context.ref, object)
        self.kept = kept
        self.object = object
        self.changes = changes
    }

    deinit {
        JSValueUnprotect(context.ref, object)
        JSValueUnprotect(context.ref, kept)
    }

    /// How many changes one call into JavaScript makes: a call counts against the rules' time
    /// limit, so a delta of a million changes must not be one call.
    static let changesPerCall = 64

    /// An array of the change objects of a delta, protected (the caller unprotects it), made by
    /// calls into JavaScript (`relata.changes`), one per ``changesPerCall`` changes.
    private static func changeObjects(of delta: Delta, in context: ScriptContext) throws -> JSObjectRef {
        let all = context.makeArray()
        JSValueProtect(context.ref, all)
        do {
            var start = 0
            while start < delta.changes.count {
                let end = min(start + changesPerCall, delta.changes.count)
                let made = try changeObjects(of: delta.changes[start..<end], table: delta.tableName, in: context)
                JSValueProtect(context.ref, made)
                defer { JSValueUnprotect(context.ref, made) }
                for offset in 0..<(end - start) {
                    JSObjectSetPropertyAtIndex(context.ref, all, UInt32(start + offset), JSObjectGetPropertyAtIndex(context.ref, made, UInt32(offset), nil), nil)
                }
                start = end
            }
        } catch {
            JSValueUnprotect(context.ref, all)
            throw error
        }
        return all
    }

    /// The change objects of some changes, made in one call: each part of every change goes in
    /// an array of its own, and name lists and strings that recur from change to change are made once.
    private static func changeObjects(of changes: ArraySlice<DeltaChange>, table: String, in context: ScriptContext) throws -> JSObjectRef {
        var parts = RootedValues(in: context)
        for _ in 0..<9 { parts.append(context.makeArray()) }
        let (types, ids, names, oldNames, oldValues, newNames, newValues, statuses, messages) =
            (parts.values[0], parts.values[1], parts.values[2], parts.values[3], parts.values[4],
             parts.values[5], parts.values[6], parts.values[7], parts.values[8])
        // Each value made here goes into one of the parts at once, which keeps it alive for this call.
        var strings: [String: JSValueRef] = [:]
        var nameLists: [[String]: JSValueRef] = [:]
        func string(_ text: String) -> JSValueRef {
            if let made = strings[text] { return made }
            let made = context.string(text)
            strings[text] = made
            return made
        }
        func list(_ keys: [String]) -> JSValueRef {
            if let made = nameLists[keys] { return made }
            let made = context.makeArray(keys) { string($0) }
            nameLists[keys] = made
            return made
        }
        func set(_ part: JSValueRef, _ index: UInt32, _ value: JSValueRef) {
            JSObjectSetPropertyAtIndex(context.ref, JSValueToObject(context.ref, part, nil), index, value, nil)
        }
        for (index, change) in zip(0..<UInt32.max, changes) {
            let old = change.oldValues.sorted { $0.key < $1.key }, new = change.newValues.sorted { $0.key < $1.key }
            set(types, index, string(change.type.rawValue))
            set(ids, index, JSValueMakeNumber(context.ref, Double(change.changeId)))
            set(names, index, list(Set(change.oldValues.keys).union(change.newValues.keys).sorted()))
            set(oldNames, index, list(old.map(\.key)))
            set(oldValues, index, context.makeArray(old) { context.jsValue($0.value) })
            set(newNames, index, list(new.map(\.key)))
            set(newValues, index, context.makeArray(new) { context.jsValue($0.value) })
            set(statuses, index, string(change.status.rawValue))
            set(messages, index, change.message.map { context.string($0) } ?? JSValueMakeNull(context.ref))
        }
        let made = try context.call(context.helper("changes"), parts)
        guard let array = JSValueToObject(context.ref, made, nil) else {
            throw ScriptError(.runtime, "could not show the changes of \(table) to the rules")
        }
        return array
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

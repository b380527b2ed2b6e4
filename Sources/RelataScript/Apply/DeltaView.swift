internal import CJavaScriptCore
import Relata

/// A delta as one script sees it: `delta.name`, `delta.count`, `delta[i]`, `delta.changes`.
final class DeltaView {
    let context: ScriptContext
    let object: JSObjectRef
    /// The change objects, kept alive by ``kept``: a script may replace `delta[i]` or `delta.changes[i]`.
    let changes: [JSObjectRef]
    /// An array no script sees, holding every change object (in the delta's order).
    let kept: JSObjectRef

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
        let made: JSValueRef
        do {
            made = try context.call(context.helper("delta")) { arguments in
                arguments.append(context.string(delta.tableName))
                arguments.append(kept)
            }
        } catch {
            JSValueUnprotect(context.ref, kept)
            throw error
        }
        guard let object = JSValueToObject(context.ref, made, nil) else {
            JSValueUnprotect(context.ref, kept)
            throw ScriptError(.runtime, "could not show the delta of \(delta.tableName) to the rules")
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

    /// The change objects of some changes, made in one call into JavaScript (`relata.changes`)
    /// from a few arrays, not from values made one by one: per change six numbers (id, type,
    /// status, and its old, new and all field names as indexes into lists made once), then
    /// every value packed (``PackedValues``), and the messages there are.
    private static func changeObjects(of changes: ArraySlice<DeltaChange>, table: String, in context: ScriptContext) throws -> JSObjectRef {
        var header: [Double] = []
        header.reserveCapacity(changes.count * 6)
        // Types and statuses by their place in `strings`: every type's name, then every status's.
        let types = DeltaChange.ChangeType.allCases, statuses = DeltaChange.Status.allCases
        let strings = types.map(\.rawValue) + statuses.map(\.rawValue)
        func code(_ type: DeltaChange.ChangeType) -> Double { Double(types.firstIndex(of: type) ?? 0) }
        func code(_ status: DeltaChange.Status) -> Double { Double(types.count + (statuses.firstIndex(of: status) ?? 0)) }
        var lists = NameLists()
        var values = PackedValues()
        var messages: [(index: Int, message: String)] = []
        var old: Int?, new: Int?
        var inOrder: [Value] = []
        for (index, change) in changes.enumerated() {
            let oldList = lists.index(of: change.oldValues, after: old, values: &inOrder)
            for value in inOrder { values.append(value) }
            let newList = lists.index(of: change.newValues, after: new, values: &inOrder)
            for value in inOrder { values.append(value) }
            (old, new) = (oldList, newList)
            header += [Double(change.changeId), code(change.type), code(change.status),
                       Double(oldList), Double(newList), Double(lists.union(oldList, newList))]
            if let message = change.message { messages.append((index, message)) }
        }
        let made = try context.call(context.helper("changes")) { arguments in
            arguments.append(PackedValues.typedArray(header, kJSTypedArrayTypeFloat64Array, in: context))
            arguments.append(context.makeArray(lists.all) { names in context.makeArray(names) { context.string($0) } })
            arguments.append(context.makeArray(strings) { context.string($0) })
            let messageArray = context.makeArray()
            arguments.append(messageArray)
            for (index, message) in messages {
                JSObjectSetPropertyAtIndex(context.ref, messageArray, UInt32(index), context.string(message), nil)
            }
            values.appendArguments(to: &arguments, in: context)
        }
        guard let array = JSValueToObject(context.ref, made, nil) else {
            throw ScriptError(.runtime, "could not show the changes of \(table) to the rules")
        }
        return array
    }

    /// The sorted field names of changes' values, each list kept once: a change's names are
    /// checked against the previous change's (most changes of a delta have the same fields),
    /// not sorted and hashed again.
    private struct NameLists {
        private(set) var all: [[String]] = []
        private var indexes: [[String]: Int] = [:]
        private var unions: [Pair: Int] = [:]

        private struct Pair: Hashable {
            let old: Int
            let new: Int
        }

        /// The list of the names of `values`, and in `inOrder` the values in the list's order;
        /// `last` is the list the previous change had. Each name is looked up once.
        mutating func index(of values: [String: Value], after last: Int?, values inOrder: inout [Value]) -> Int {
            inOrder.removeAll(keepingCapacity: true)
            if let last, all[last].count == values.count {
                for name in all[last] {
                    guard let value = values[name] else { break }
                    inOrder.append(value)
                }
                if inOrder.count == values.count { return last }
                inOrder.removeAll(keepingCapacity: true)
            }
            let names = values.keys.sorted()
            for name in names { inOrder.append(values[name] ?? .null) }
            return index(of: names)
        }

        /// The list of every name of either list, sorted.
        mutating func union(_ old: Int, _ new: Int) -> Int {
            if all[old].isEmpty || old == new { return new }
            if all[new].isEmpty { return old }
            let pair = Pair(old: old, new: new)
            if let known = unions[pair] { return known }
            let made = index(of: Set(all[old]).union(all[new]).sorted())
            unions[pair] = made
            return made
        }

        private mutating func index(of names: [String]) -> Int {
            if let known = indexes[names] { return known }
            all.append(names)
            indexes[names] = all.count - 1
            return all.count - 1
        }
    }

    /// Shows a change's new status and message to the script.
    func show(status: DeltaChange.Status, message: String?, at index: Int) {
        context.setProperty("status", of: changes[index], to: context.string(status.rawValue))
        context.setProperty("message", of: changes[index], to: message.map { context.string($0) } ?? JSValueMakeNull(context.ref))
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

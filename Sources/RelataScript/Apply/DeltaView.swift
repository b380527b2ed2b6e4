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

    /// How many calls' changes are packed at a time on another thread (``MadeMeanwhile``), while
    /// JavaScript makes the objects of the calls before.
    static let callsPerBlock = 64

    /// An array of the change objects of a delta, protected (the caller unprotects it), made by
    /// calls into JavaScript (`relata.changes`), one per ``changesPerCall`` changes.
    private static func changeObjects(of delta: Delta, in context: ScriptContext) throws -> JSObjectRef {
        let all = context.makeArray()
        JSValueProtect(context.ref, all)
        do {
            let changes = delta.changes, blockSize = changesPerCall * callsPerBlock
            func packing(from start: Int) -> MadeMeanwhile<[PackedChanges]> {
                let end = min(start + blockSize, changes.count)
                return MadeMeanwhile(coveringChanges: end - start) {
                    stride(from: start, to: end, by: changesPerCall).map { PackedChanges(changes[$0..<min($0 + changesPerCall, end)]) }
                }
            }
            var start = 0
            var next = packing(from: start)
            while start < changes.count {
                let block = try next.value()
                let end = min(start + blockSize, changes.count)
                if end < changes.count { next = packing(from: end) }
                var first = start
                for packed in block {
                    let made = try changeObjects(of: packed, table: delta.tableName, in: context)
                    JSValueProtect(context.ref, made)
                    defer { JSValueUnprotect(context.ref, made) }
                    for offset in 0..<packed.count {
                        JSObjectSetPropertyAtIndex(context.ref, all, UInt32(first + offset), JSObjectGetPropertyAtIndex(context.ref, made, UInt32(offset), nil), nil)
                    }
                    first += packed.count
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
    /// from their packed arrays.
    private static func changeObjects(of packed: PackedChanges, table: String, in context: ScriptContext) throws -> JSObjectRef {
        let made = try context.call(context.helper("changes")) { arguments in
            arguments.append(PackedValues.typedArray(packed.header, kJSTypedArrayTypeFloat64Array, in: context))
            arguments.append(context.makeArray(packed.lists) { names in context.makeArray(names) { context.string($0) } })
            arguments.append(context.makeArray(PackedChanges.strings) { context.string($0) })
            let messageArray = context.makeArray()
            arguments.append(messageArray)
            for (index, message) in packed.messages {
                JSObjectSetPropertyAtIndex(context.ref, messageArray, UInt32(index), context.string(message), nil)
            }
            packed.values.appendArguments(to: &arguments, in: context)
        }
        guard let array = JSValueToObject(context.ref, made, nil) else {
            throw ScriptError(.runtime, "could not show the changes of \(table) to the rules")
        }
        return array
    }

    /// One call's changes as `relata.changes` takes them — a few arrays, not values made one by
    /// one: per change six numbers (id, type, status, and its old, new and all field names as
    /// indexes into lists made once), then every value packed (``PackedValues``), and the messages
    /// there are. Made with no JavaScript, so on any thread.
    private struct PackedChanges: Sendable {
        /// Types and statuses by their place here: every type's name, then every status's.
        static let strings = DeltaChange.ChangeType.allCases.map(\.rawValue) + DeltaChange.Status.allCases.map(\.rawValue)

        private(set) var header: [Double] = []
        private(set) var lists: [[String]] = []
        private(set) var messages: [(index: Int, message: String)] = []
        private(set) var values = PackedValues()
        /// How many changes it holds.
        var count: Int { header.count / 6 }

        init(_ changes: ArraySlice<DeltaChange>) {
            let types = DeltaChange.ChangeType.allCases, statuses = DeltaChange.Status.allCases
            func code(_ type: DeltaChange.ChangeType) -> Double { Double(types.firstIndex(of: type) ?? 0) }
            func code(_ status: DeltaChange.Status) -> Double { Double(types.count + (statuses.firstIndex(of: status) ?? 0)) }
            header.reserveCapacity(changes.count * 6)
            var lists = NameLists()
            var old = NameLists.Layout(), new = NameLists.Layout()
            var inOrder: [Value] = []
            for position in changes.indices {   // each change read in place, not copied
                let oldList = lists.index(of: changes[position].oldValues, layout: &old, values: &inOrder)
                for value in inOrder { values.append(value) }
                let newList = lists.index(of: changes[position].newValues, layout: &new, values: &inOrder)
                for value in inOrder { values.append(value) }
                header += [Double(changes[position].changeId), code(changes[position].type), code(changes[position].status),
                           Double(oldList), Double(newList), Double(lists.union(oldList, newList))]
                if let message = changes[position].message { messages.append((position - changes.startIndex, message)) }
            }
            self.lists = lists.all
        }
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

        /// The list of names the previous change's values (old or new) held theirs by, the
        /// index of its names sorted, and where each name goes in that sorted list: a delta's
        /// changes share their names (as `makeDelta` and the wire readers make them), so each
        /// change's values are put in order with no name compared.
        struct Layout {
            fileprivate var names: FieldNames?
            fileprivate var list = 0
            fileprivate var places: [Int] = []
        }

        /// The list of the names of `values`, and in `inOrder` the values in the list's order;
        /// `layout` is the previous change's, and becomes this one's.
        mutating func index(of values: FieldValues, layout: inout Layout, values inOrder: inout [Value]) -> Int {
            inOrder.removeAll(keepingCapacity: true)
            guard values.count == values.names.names.count else {
                // Values for some of their names only (a hand-made change): sorted here.
                let sorted = values.sorted { $0.key < $1.key }
                inOrder.append(contentsOf: sorted.lazy.map(\.value))
                return index(of: sorted.map(\.key))
            }
            if values.names !== layout.names {
                let names = values.names.names
                let order = values.names.positionsInNameOrder()
                var places = [Int](repeating: 0, count: names.count)
                for (place, slot) in order.enumerated() { places[slot] = place }
                layout = Layout(names: values.names, list: index(of: order.map { names[$0] }), places: places)
            }
            inOrder.append(contentsOf: repeatElement(.null, count: values.count))
            for slot in layout.places.indices {
                if let value = values.value(at: slot) { inOrder[layout.places[slot]] = value }
            }
            return layout.list
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

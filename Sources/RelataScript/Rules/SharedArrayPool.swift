internal import CJavaScriptCore

/// Shared arrays and cursor objects kept between batch runs, per script scope: a batch over a
/// million rows reuses the memory the previous batch touched instead of
/// faulting in tens of megabytes of fresh pages. Holds at most what the largest
/// recent batch needed; emptied whenever scripts are loaded or the host goes.
final class SharedArrayPool {
    private var free: [Key: [AnyObject]] = [:]

    private struct Key: Hashable {
        let context: ObjectIdentifier
        let element: ObjectIdentifier
    }

    /// An array of at least `count` elements (only the first `count` are meant), zeroed if asked.
    func take<Element: SharedArrayElement>(_: Element.Type, count: Int, in context: ScriptContext,
                                            zeroed: Bool = false) -> SharedArray<Element> {
        let key = Key(context: ObjectIdentifier(context), element: ObjectIdentifier(Element.self))
        if let index = free[key]?.firstIndex(where: { ($0 as! SharedArray<Element>).buffer.count >= count }),
           let array = free[key]?.remove(at: index) as? SharedArray<Element> {
            if zeroed { UnsafeMutableRawBufferPointer(array.buffer).initializeMemory(as: UInt8.self, repeating: 0) }
            return array
        }
        return SharedArray(count: count, in: context, zeroed: zeroed)
    }

    /// Returns arrays for later batches of the same scope.
    func recycle<Element: SharedArrayElement>(_ arrays: [SharedArray<Element>], context: ScriptContext) {
        let key = Key(context: ObjectIdentifier(context), element: ObjectIdentifier(Element.self))
        free[key, default: []].append(contentsOf: arrays as [AnyObject])
    }

    /// Cursor objects not bound to a batch, by scope and key. A batch that starts while
    /// another of the same table and scope runs (a rule reading a calculated field in bulk)
    /// finds none free and makes its own, kept here afterwards too.
    private var freeCursors: [CursorKey: [CursorObjects]] = [:]

    private struct CursorKey: Hashable {
        let context: ObjectIdentifier
        let key: String
    }

    func takeCursor(_ key: String, in context: ScriptContext) -> CursorObjects? {
        freeCursors[CursorKey(context: ObjectIdentifier(context), key: key)]?.popLast()
    }

    func recycleCursor(_ objects: CursorObjects, context: ScriptContext) {
        freeCursors[CursorKey(context: ObjectIdentifier(context), key: objects.key), default: []].append(objects)
    }

    /// Lets every array and cursor go (before the contexts they belong to are released).
    func removeAll() {
        free.removeAll()
        freeCursors.removeAll()
    }
}

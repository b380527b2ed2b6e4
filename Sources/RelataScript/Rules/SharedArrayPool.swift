internal import CJavaScriptCore

/// Shared arrays kept between batch runs, per script scope: a batch over a
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

    /// Lets every array go (before the contexts they belong to are released).
    func removeAll() { free.removeAll() }
}

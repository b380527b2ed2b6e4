package import CJavaScriptCore

/// JavaScript values made in Swift and gathered before they are used together — the
/// arguments of a call — kept alive until the list goes.
///
/// JavaScriptCore's collector finds the values a program holds by scanning the stack and
/// the registers; it never looks into Swift's heap. A value made in Swift and then held only
/// in a Swift array is collected as soon as making the next value triggers a collection, and
/// using it afterwards crashes inside JavaScriptCore. The first ``inlineCapacity`` values are
/// held in the list itself — a local variable, on its caller's stack, where the collector
/// finds them — and each value past them is protected until the list is dropped. A list
/// is therefore only ever a local variable of synchronous code (or an `inout` argument): kept in an
/// object, or in an async function's frame, its first values would be on the heap, where the
/// collector does not look. Under the address sanitizer, whose check of use after return moves
/// locals to a "fake stack" on the heap, every value is protected.
///
/// ```swift
/// let returned = try context.call(handler) { arguments in
///     arguments.append(RowObject.make(row, in: context))
///     arguments.append(try originals(of: row, in: context))   // allocates: the row object stays alive
/// }
/// ```
package struct RootedValues: ~Copyable {
    /// Values held in the list itself, unprotected. A rule's call has one or two arguments:
    /// protecting each (a lock and a table of JavaScriptCore's per value, then again to
    /// unprotect) cost more than the call's other work.
    static let inlineCapacity = 4

    /// Whether a local variable is on the machine's stack: not under the address sanitizer
    /// (its runtime is in the process), which may move locals to a fake stack on the heap.
    static let localsAreOnTheStack = PrivateJavaScriptCore.address(of: "__asan_init") == nil

    private let context: ScriptContext
    private var inline: (JSValueRef?, JSValueRef?, JSValueRef?, JSValueRef?) = (nil, nil, nil, nil)
    /// How many values are held inline (the first ones).
    private var inlineCount = 0
    /// The values past the inline ones, each protected: an array's storage is on the heap.
    private var protected: [JSValueRef] = []

    @available(*, noasync, message: "an async function's locals may be on the heap, where the collector does not look")
    package init(in context: ScriptContext) {
        self.context = context
    }

    /// How many values the list holds.
    package var count: Int { inlineCount + protected.count }

    /// Keeps a value alive until this list goes, and adds it to the list.
    package mutating func append(_ value: JSValueRef) {
        guard Self.localsAreOnTheStack, protected.isEmpty, inlineCount < Self.inlineCapacity else {
            JSValueProtect(context.ref, value)
            protected.append(value)
            return
        }
        switch inlineCount {
        case 0: inline.0 = value
        case 1: inline.1 = value
        case 2: inline.2 = value
        default: inline.3 = value
        }
        inlineCount += 1
    }

    /// Calls `body` with the values, in the order they were appended, in memory a C call may read.
    package func withValues<T>(_ body: (UnsafeBufferPointer<JSValueRef?>) -> T) -> T {
        guard protected.isEmpty else {
            let all = [inline.0, inline.1, inline.2, inline.3].prefix(inlineCount) + protected.map(Optional.some)
            return all.withUnsafeBufferPointer(body)
        }
        return withUnsafeBytes(of: inline) { bytes in
            body(UnsafeBufferPointer(start: bytes.baseAddress?.assumingMemoryBound(to: JSValueRef?.self), count: inlineCount))
        }
    }

    deinit {
        for value in protected { JSValueUnprotect(context.ref, value) }
    }
}

package import CJavaScriptCore

/// JavaScript values made in Swift and gathered before they are used together — the
/// arguments of a call — kept alive until the list goes.
///
/// JavaScriptCore's collector finds the values a program holds by scanning the stack and
/// the registers; it never looks into Swift's heap. A value made in Swift and then held only
/// in a Swift array is collected as soon as making the next value triggers a collection, and
/// using it afterwards crashes inside JavaScriptCore. Each value appended here is protected
/// until the list is dropped.
///
/// ```swift
/// let returned = try context.call(handler) { arguments in
///     arguments.append(RowObject.make(row, in: context))
///     arguments.append(try originals(of: row, in: context))   // allocates: the row object stays alive
/// }
/// ```
package struct RootedValues: ~Copyable {
    private let context: ScriptContext
    /// The values, in the order they were appended.
    package private(set) var values: [JSValueRef] = []

    package init(in context: ScriptContext) {
        self.context = context
    }

    /// Keeps a value alive until this list goes, and adds it to the list.
    package mutating func append(_ value: JSValueRef) {
        JSValueProtect(context.ref, value)
        values.append(value)
    }

    deinit {
        for value in values { JSValueUnprotect(context.ref, value) }
    }
}

package import CJavaScriptCore
import Foundation
import Relata

/// JavaScript functions implemented in Swift. Each function object holds its
/// Swift closure as private data (retained, released by the finalizer); a
/// Swift error thrown by the closure becomes a JavaScript exception and never
/// crosses a C frame.
package enum NativeFunction {
    package typealias Body = (_ context: ScriptContext, _ this: JSObjectRef?, _ arguments: [JSValueRef]) throws -> JSValueRef

    final class Box {
        let body: Body
        /// Not kept alive: the context owns (through its global object) the function that owns this box.
        private let back: BackReference<ScriptContext>
        var context: ScriptContext? { back.object }
        init(_ body: @escaping Body, context: ScriptContext) {
            self.body = body
            back = context.back
        }
    }

    package static func make(in context: ScriptContext, _ body: @escaping Body) -> JSObjectRef {
        let box = Unmanaged.passRetained(Box(body, context: context)).toOpaque()
        return JSObjectMake(context.ref, functionClass, box)
    }

    // Created once and never changed; JavaScriptCore classes may be used from any thread.
    nonisolated(unsafe) private static let functionClass: JSClassRef = {
        var definition = kJSClassDefinitionEmpty
        definition.className = UnsafePointer(strdup("RelataFunction"))
        definition.callAsFunction = { ctx, function, this, count, arguments, exception in
            guard let function, let pointer = JSObjectGetPrivate(function) else { return nil }
            let box = Unmanaged<Box>.fromOpaque(pointer).takeUnretainedValue()
            guard let context = box.context else {
                exception?.pointee = JSString.with("this function belongs to rules that were unloaded") { JSValueMakeString(ctx, $0) }
                return nil
            }
            let values: [JSValueRef] = (0..<count).map { arguments?[$0] ?? JSValueMakeUndefined(context.ref) }
            do {
                return try box.body(context, this, values)
            } catch let error as ScriptError {
                if error.kind == .timeLimitExceeded { context.machine.termination = error }
                exception?.pointee = context.makeError(error)
            } catch let error as RelataError {
                exception?.pointee = context.makeError(error)
            } catch {
                exception?.pointee = context.makeError("\(error)")
            }
            return JSValueMakeUndefined(context.ref)
        }
        definition.finalize = { object in
            guard let object, let pointer = JSObjectGetPrivate(object) else { return }
            Unmanaged<Box>.fromOpaque(pointer).release()
        }
        return JSClassCreate(&definition)
    }()
}

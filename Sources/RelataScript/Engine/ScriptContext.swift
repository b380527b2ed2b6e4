internal import CJavaScriptCore
import Foundation
import Relata

/// One global object (a JSGlobalContext) in an engine's VM. Rule scripts each
/// get their own, so that every table's top-level handlers stay separate.
final class ScriptContext {
    let ref: JSGlobalContextRef
    /// The engine this context belongs to (unowned: the engine owns its contexts' lifetime).
    unowned(unsafe) var engine: ScriptEngine!
    /// Values kept alive for the context's lifetime (compiled functions, prototypes).
    private var protected: [JSValueRef] = []

    /// The file name of Relata's own JavaScript, skipped when locating errors.
    static let bootstrapFile = "relata:bootstrap"

    init(group: JSContextGroupRef) {
        ref = JSGlobalContextCreateInGroup(group, nil)
        JSString.with("eval and new Function are disabled in Relata scripts") { JSGlobalContextSetEvalEnabled(ref, false, $0) }
    }

    /// Releases the context; call once, when its engine or rule set goes away.
    func release() {
        for value in protected { JSValueUnprotect(ref, value) }
        protected = []
        JSGlobalContextRelease(ref)
    }

    func installBootstrap() throws {
        _ = try evaluate("""
            function __relataError(message) { return new Error(message) }
            """, fileName: Self.bootstrapFile, line: 1)
    }

    var global: JSObjectRef { JSContextGetGlobalObject(ref) }

    /// Keeps a value alive until the context is released.
    @discardableResult
    func protect(_ value: JSValueRef) -> JSValueRef {
        JSValueProtect(ref, value)
        protected.append(value)
        return value
    }

    // MARK: Running scripts

    func evaluate(_ source: String, fileName: String, line: Int) throws -> JSValueRef {
        engine.checkThread()
        var exception: JSValueRef?
        let result = JSString.with(source) { script in
            JSString.with(fileName) { url in
                JSEvaluateScript(ref, script, nil, url, Int32(clamping: line), &exception)
            }
        }
        if let exception { throw error(from: exception, file: fileName) }
        return result ?? JSValueMakeUndefined(ref)
    }

    func checkSyntax(_ source: String, fileName: String, line: Int) throws {
        var exception: JSValueRef?
        let valid = JSString.with(source) { script in
            JSString.with(fileName) { url in JSCheckScriptSyntax(ref, script, url, Int32(clamping: line), &exception) }
        }
        if !valid, let exception { throw error(from: exception, file: fileName) }
    }

    func call(_ function: JSObjectRef, _ arguments: [JSValueRef], this: JSObjectRef? = nil) throws -> JSValueRef {
        engine.checkThread()
        var exception: JSValueRef?
        let arguments = arguments.map { Optional($0) }
        let result = arguments.withUnsafeBufferPointer { buffer in
            JSObjectCallAsFunction(ref, function, this, buffer.count, buffer.baseAddress, &exception)
        }
        if let exception { throw error(from: exception, file: nil) }
        return result ?? JSValueMakeUndefined(ref)
    }

    /// The global function with a name, or an error naming what is there instead.
    func globalFunction(named name: String) throws -> JSObjectRef {
        guard let function = optionalGlobalFunction(named: name) else {
            throw ScriptError(.runtime, "there is no function named \(name)")
        }
        return function
    }

    /// The global function with a name, or nil when the script defines none.
    func optionalGlobalFunction(named name: String) -> JSObjectRef? {
        let value = property(name, of: global)
        guard JSValueIsObject(ref, value), let object = JSValueToObject(ref, value, nil), JSObjectIsFunction(ref, object) else {
            return nil
        }
        return object
    }

    /// Compiles a function expression (`function (row) { … }`) without `eval`.
    func compileFunction(_ source: String, fileName: String, line: Int) throws -> JSObjectRef {
        let value = try evaluate("(\(source))", fileName: fileName, line: line)
        guard let object = JSValueToObject(ref, value, nil), JSObjectIsFunction(ref, object) else {
            throw ScriptError(.syntax, "expected a function expression such as `function (row) { return … }`", file: fileName, line: line)
        }
        protect(object)
        return object
    }

    // MARK: Properties

    func property(_ name: String, of object: JSObjectRef) -> JSValueRef {
        JSString.with(name) { JSObjectGetProperty(ref, object, $0, nil) } ?? JSValueMakeUndefined(ref)
    }

    func setProperty(_ name: String, of object: JSObjectRef, to value: JSValueRef, readOnly: Bool = false) {
        let attributes = readOnly ? JSPropertyAttributes(kJSPropertyAttributeReadOnly | kJSPropertyAttributeDontDelete) : 0
        JSString.with(name) { JSObjectSetProperty(ref, object, $0, value, attributes, nil) }
    }

    /// Defines a global function implemented in Swift.
    func defineFunction(_ name: String, _ body: @escaping NativeFunction.Body) {
        setProperty(name, of: global, to: NativeFunction.make(in: self, body), readOnly: true)
    }

    func makeObject() -> JSObjectRef { JSObjectMake(ref, nil, nil) }

    func makeArray(_ elements: [JSValueRef]) -> JSObjectRef {
        elements.map { Optional($0) }.withUnsafeBufferPointer { JSObjectMakeArray(ref, $0.count, $0.baseAddress, nil) }
    }

    /// A JavaScript Error whose stack shows the script that called into Swift.
    func makeError(_ message: String) -> JSValueRef {
        if let make = optionalGlobalFunction(named: "__relataError") {
            var exception: JSValueRef?
            var argument: JSValueRef? = string(message)
            if let error = JSObjectCallAsFunction(ref, make, nil, 1, &argument, &exception), exception == nil { return error }
        }
        var argument: JSValueRef? = string(message)
        return JSObjectMakeError(ref, 1, &argument, nil)
    }

    func string(_ text: String) -> JSValueRef {
        JSString.with(text) { JSValueMakeString(ref, $0) }
    }

    // MARK: Errors

    /// Turns a JavaScript exception into a ``ScriptError``, copying everything out of it at once.
    func error(from exception: JSValueRef, file: String?) -> ScriptError {
        if engine.watchdog.fired {
            engine.watchdog.fired = false
            var error = ScriptError(.timeLimitExceeded,
                                    "the script ran longer than the time limit (\(engine.timeLimit)) and was stopped; look for a loop that never ends",
                                    file: file)
            locate(&error, exception)
            return error
        }
        guard JSValueIsObject(ref, exception), let object = JSValueToObject(ref, exception, nil) else {
            return ScriptError(.runtime, "uncaught exception: \(JSString.string(of: exception, in: ref) ?? "?")", file: file)
        }
        let name = JSString.string(of: property("name", of: object), in: ref) ?? "Error"
        let message = JSString.string(of: property("message", of: object), in: ref) ?? ""
        let isFailure = JSValueToBoolean(ref, property("__relataFail", of: object))
        let kind: ScriptError.Kind = isFailure ? .ruleFailed : name == "SyntaxError" ? .syntax : .runtime
        var error = ScriptError(kind, isFailure || name == "Error" ? message : "\(name): \(message)", file: file)
        locate(&error, exception)
        return error
    }

    /// Fills in file, line, column and stack: from the innermost stack frame in a
    /// user's script (so `fail()` and host errors point at their caller), else
    /// from the exception's own `sourceURL`, `line` and `column`.
    private func locate(_ error: inout ScriptError, _ exception: JSValueRef) {
        guard let object = JSValueToObject(ref, exception, nil) else { return }
        let stackValue = property("stack", of: object)
        let stack = JSValueIsUndefined(ref, stackValue) ? nil : JSString.string(of: stackValue, in: ref)
        let frames = (stack ?? "").utf8.split(separator: UInt8(ascii: "\n")).map { String(Substring($0)) }
            .filter { !$0.hasPrefix(Self.bootstrapFile) && !$0.contains("@" + Self.bootstrapFile) }
        error.stack = frames.isEmpty ? nil : frames.joined(separator: "\n")
        if let frame = frames.lazy.compactMap(StackFrame.init).first {
            error.file = frame.file
            error.line = frame.line
            error.column = frame.column
            return
        }
        let sourceURL = property("sourceURL", of: object)
        if !JSValueIsUndefined(ref, sourceURL), let url = JSString.string(of: sourceURL, in: ref), url != Self.bootstrapFile {
            error.file = url
        }
        let line = property("line", of: object)
        if JSValueIsNumber(ref, line) { error.line = Int(JSValueToNumber(ref, line, nil)) }
        let column = property("column", of: object)
        if JSValueIsNumber(ref, column), error.kind != .syntax { error.column = Int(JSValueToNumber(ref, column, nil)) }
    }
}

/// One line of a JavaScriptCore stack: `function@file:line:column` or `file:line:column`.
struct StackFrame {
    let file: String
    let line: Int
    let column: Int

    init?(_ text: String) {
        // Scanned as UTF-8 bytes from the end: `…:line:column`, the file after the first `@`.
        let bytes = text.utf8
        guard let lastColon = bytes.lastIndex(of: UInt8(ascii: ":")),
              let lineColon = bytes[..<lastColon].lastIndex(of: UInt8(ascii: ":")),
              let column = Int(Substring(bytes[bytes.index(after: lastColon)...])),
              let line = Int(Substring(bytes[bytes.index(after: lineColon)..<lastColon])) else { return nil }
        let fileStart = bytes[..<lineColon].firstIndex(of: UInt8(ascii: "@")).map(bytes.index(after:)) ?? bytes.startIndex
        self.file = String(Substring(bytes[fileStart..<lineColon]))
        self.line = line
        self.column = column
    }
}

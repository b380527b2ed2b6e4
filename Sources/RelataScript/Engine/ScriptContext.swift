package import CJavaScriptCore
import Foundation
import Relata

/// One global object (a JSGlobalContext) in an engine's VM. Rule scripts each
/// get their own, so that every table's top-level handlers stay separate.
package final class ScriptContext {
    package let ref: JSGlobalContextRef
    /// The virtual machine this context lives in; held strongly, so the group outlives the context.
    package let machine: VirtualMachine
    /// Relata's own helpers (`relata.error`, `relata.describe`, …): an object that
    /// only Relata's code holds, so no script can shadow or overwrite them.
    package let runtime: JSObjectRef
    /// Values kept alive for the context's lifetime (compiled functions, prototypes).
    private var protected: [JSValueRef] = []
    /// Functions Relata generated in this context (batch loops, cursor factories), by key.
    private var generatedFunctions: [String: JSObjectRef] = [:]
    private var madeBack: BackReference<ScriptContext>?

    /// How the objects this context makes for scripts (rows, functions) reach it without keeping
    /// it alive: a script may keep them longer than the context lives.
    var back: BackReference<ScriptContext> { BackReference.kept(in: &madeBack, to: self) }

    /// The file name of Relata's own JavaScript, skipped when locating errors.
    static let bootstrapFile = "relata:bootstrap"

    package init(machine: VirtualMachine) throws {
        self.machine = machine
        let ref = JSGlobalContextCreateInGroup(machine.group, nil)!
        JSString.with("eval and new Function are disabled in Relata scripts") { PrivateJavaScriptCore.setEvalEnabled?(ref, false, $0) }
        self.ref = ref
        runtime = JSObjectMake(ref, nil, nil)
        JSValueProtect(ref, runtime)
        try install(Self.coreHelpers)
        try install(Self.environment)
    }

    deinit {
        madeBack?.end()
        for value in protected { JSValueUnprotect(ref, value) }
        JSValueUnprotect(ref, runtime)
        JSGlobalContextRelease(ref)
    }

    /// The helpers every context has: errors made with a stack, and thrown values described.
    private static let coreHelpers = """
        relata.error = function (message) { return new Error(message); };
        // Across contexts (realms) `instanceof Error` fails; the internal tag does not.
        relata.isError = function (value) { return Object.prototype.toString.call(value) === '[object Error]'; };
        relata.show = function (value) {
            if (typeof value === 'string') return value;
            if (typeof value === 'function') return 'a function';
            if (value instanceof Date) return isNaN(value) ? 'Invalid Date' : value.toISOString();
            try { const json = JSON.stringify(value); if (json !== undefined) return json; } catch (e) {}
            try { return String(value); } catch (e) { return 'a value that cannot be shown'; }
        };
        relata.describe = function (e) {
            if (!relata.isError(e)) return '\\u0001' + relata.show(e);
            return [e.name, e.__relataFail === true ? '1' : '0', e.message, e.stack, e.sourceURL, e.line, e.column].join('\\u0000');
        };
        """

    /// Rules see UTC on every site, whatever the host's time zone, and delta events get the same
    /// change objects: `rule-environment.js` (`Engine/Environment`), the same file the JavaScript
    /// client runs in the browser.
    private static let environment = String(decoding: PackageResources.rule_environment_js, as: UTF8.self)
        .replacingOccurrences(of: "export function ", with: "function ")
        + "\ninstallUTCDates(globalThis, relata);\ninstallChangeObjects(relata);\n"

    /// Runs Relata's own JavaScript with `relata` (the ``runtime`` object) in scope:
    /// what it stores there is out of every script's reach.
    package func install(_ source: String) throws {
        let installer = try compile("function (relata) { \(source)\n }", binding: false)
        _ = try call(installer, [runtime])
    }

    /// Compiles a function expression of Relata's own (generated code) with `relata` in scope.
    func compile(_ expression: String) throws -> JSObjectRef {
        try compile(expression, binding: true)
    }

    private func compile(_ expression: String, binding: Bool) throws -> JSObjectRef {
        let source = binding ? "(function (relata) { 'use strict'; return (\(expression)); })" : "(\(expression))"
        let value = try evaluate(source, fileName: Self.bootstrapFile, line: 1)
        guard var function = JSValueToObject(ref, value, nil), JSObjectIsFunction(ref, function) else {
            throw ScriptError(.runtime, "Relata's own script did not compile to a function")
        }
        if binding {
            let bound = try call(function, [runtime])
            guard let object = JSValueToObject(ref, bound, nil) else {
                throw ScriptError(.runtime, "Relata's own script did not compile to an object")
            }
            function = object
        }
        protect(function)
        return function
    }

    /// A generated function kept with this context (so it lives and dies with it), made once per key.
    func generated(_ key: String, _ make: () throws -> String) throws -> JSObjectRef {
        if let known = generatedFunctions[key] { return known }
        let function = try compile(make())
        generatedFunctions[key] = function
        return function
    }

    /// One of Relata's helpers in ``runtime``.
    package func helper(_ name: String) throws -> JSObjectRef {
        let value = property(name, of: runtime)
        guard let object = JSValueToObject(ref, value, nil), JSObjectIsFunction(ref, object) else {
            throw ScriptError(.runtime, "Relata's helper \(name) is missing")
        }
        return object
    }

    package var global: JSObjectRef { JSContextGetGlobalObject(ref) }

    /// Keeps a value alive until the context is released.
    @discardableResult
    package func protect(_ value: JSValueRef) -> JSValueRef {
        JSValueProtect(ref, value)
        protected.append(value)
        return value
    }

    // MARK: Running scripts

    package func evaluate(_ source: String, fileName: String, line: Int) throws -> JSValueRef {
        var exception: JSValueRef?
        let result = JSString.with(source) { script in
            JSString.with(fileName) { url in
                machine.enter(in: ref) { JSEvaluateScript(ref, script, nil, url, Int32(clamping: line), &exception) }
            }
        }
        if let exception { throw locatingSyntaxError(error(from: exception, file: fileName), in: source, firstLine: line) }
        return result ?? JSValueMakeUndefined(ref)
    }

    /// A syntax error with the column JavaScriptCore leaves out, estimated from the source.
    private func locatingSyntaxError(_ error: ScriptError, in source: String, firstLine: Int) -> ScriptError {
        guard error.kind == .syntax, error.column == nil, let line = error.line else { return error }
        var located = error
        located.column = SyntaxErrorColumn.estimate(message: error.message, line: line, in: source, firstLine: firstLine)
        return located
    }

    func checkSyntax(_ source: String, fileName: String, line: Int) throws {
        var exception: JSValueRef?
        let valid = JSString.with(source) { script in
            JSString.with(fileName) { url in JSCheckScriptSyntax(ref, script, url, Int32(clamping: line), &exception) }
        }
        if !valid, let exception { throw locatingSyntaxError(error(from: exception, file: fileName), in: source, firstLine: line) }
    }

    /// Calls a function with arguments that are already kept alive: protected, reachable from
    /// something protected, passed in by JavaScript, or not objects at all. Arguments made for
    /// the call go through ``call(_:this:arguments:)`` instead (see ``RootedValues``).
    func call(_ function: JSObjectRef, _ arguments: [JSValueRef], this: JSObjectRef? = nil) throws -> JSValueRef {
        try returnedOrThrown(outcome(calling: function, arguments, this: this))
    }

    /// Calls a function with arguments made for the call, each kept alive while the next is made.
    ///
    /// ```swift
    /// try context.call(helper) { arguments in
    ///     arguments.append(context.string(name))
    ///     arguments.append(try context.object(from: values))
    /// }
    /// ```
    func call(_ function: JSObjectRef, this: JSObjectRef? = nil, arguments build: (inout RootedValues) throws -> Void) throws -> JSValueRef {
        var arguments = RootedValues(in: self)
        try build(&arguments)
        return try call(function, arguments, this: this)
    }

    /// Calls a function with arguments gathered in a ``RootedValues``, alive until the call returns.
    func call(_ function: JSObjectRef, _ arguments: borrowing RootedValues, this: JSObjectRef? = nil) throws -> JSValueRef {
        try returnedOrThrown(outcome(calling: function, arguments, this: this))
    }

    private func returnedOrThrown(_ outcome: (returned: JSValueRef?, thrown: JSValueRef?)) throws -> JSValueRef {
        if let thrown = outcome.thrown { throw error(from: thrown, file: nil) }
        return outcome.returned ?? JSValueMakeUndefined(ref)
    }

    /// Calls a function and returns what it returned or what it threw, for callers
    /// that read the thrown value's properties.
    package func outcome(calling function: JSObjectRef, _ arguments: [JSValueRef],
                         this: JSObjectRef? = nil) -> (returned: JSValueRef?, thrown: JSValueRef?) {
        arguments.map(Optional.some).withUnsafeBufferPointer { outcome(calling: function, $0, this: this) }
    }

    /// ``outcome(calling:_:this:)`` with arguments gathered in a ``RootedValues``.
    package func outcome(calling function: JSObjectRef, _ arguments: borrowing RootedValues,
                         this: JSObjectRef? = nil) -> (returned: JSValueRef?, thrown: JSValueRef?) {
        arguments.withValues { outcome(calling: function, $0, this: this) }
    }

    private func outcome(calling function: JSObjectRef, _ arguments: UnsafeBufferPointer<JSValueRef?>,
                         this: JSObjectRef?) -> (returned: JSValueRef?, thrown: JSValueRef?) {
        var exception: JSValueRef?
        let result = machine.enter(in: ref) {
            JSObjectCallAsFunction(ref, function, this, arguments.count, arguments.baseAddress, &exception)
        }
        return exception.map { (nil, $0) } ?? (result, nil)
    }

    /// Whether scripts in this context see a global of this name.
    package func hasGlobal(_ name: String) -> Bool {
        !JSValueIsUndefined(ref, property(name, of: global))
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

    package func property(_ name: String, of object: JSObjectRef) -> JSValueRef {
        JSString.with(name) { JSObjectGetProperty(ref, object, $0, nil) } ?? JSValueMakeUndefined(ref)
    }

    package func setProperty(_ name: String, of object: JSObjectRef, to value: JSValueRef, readOnly: Bool = false) {
        let attributes = readOnly ? JSPropertyAttributes(kJSPropertyAttributeReadOnly | kJSPropertyAttributeDontDelete) : 0
        JSString.with(name) { JSObjectSetProperty(ref, object, $0, value, attributes, nil) }
    }

    /// Defines a global function implemented in Swift.
    package func defineFunction(_ name: String, _ body: @escaping NativeFunction.Body) {
        setProperty(name, of: global, to: NativeFunction.make(in: self, body), readOnly: true)
    }

    func makeObject() -> JSObjectRef { JSObjectMake(ref, nil, nil) }

    /// An empty array.
    func makeArray() -> JSObjectRef { JSObjectMakeArray(ref, 0, nil, nil) }

    /// An array of values made one by one: each is in the array, and so alive, before the next
    /// is made (a value held only in a Swift array would not be — see ``RootedValues``).
    func makeArray<Elements: Sequence>(_ elements: Elements, _ makeValue: (Elements.Element) throws -> JSValueRef) rethrows -> JSObjectRef {
        let array = makeArray()
        for (index, element) in zip(0..<UInt32.max, elements) {
            JSObjectSetPropertyAtIndex(ref, array, index, try makeValue(element), nil)
        }
        return array
    }

    /// A JavaScript Error whose stack shows the script that called into Swift.
    package func makeError(_ message: String) -> JSValueRef {
        if let make = try? helper("error") {
            var exception: JSValueRef?
            var argument: JSValueRef? = string(message)
            if let error = JSObjectCallAsFunction(ref, make, nil, 1, &argument, &exception), exception == nil { return error }
        }
        var argument: JSValueRef? = string(message)
        return JSObjectMakeError(ref, 1, &argument, nil)
    }

    /// A JavaScript `Error` for a ``ScriptError`` a native function throws: its message,
    /// plus `relataKind`, `location`, `event`, `table` and `row` where known, so a script
    /// (or a rule test) that catches it can tell a rule failure from other errors.
    func makeError(_ error: ScriptError) -> JSValueRef {
        let made = makeError(error.message)
        guard let object = JSValueToObject(ref, made, nil) else { return made }
        let details: [(String, String?)] = [("relataKind", error.kind.rawValue), ("location", error.location),
                                            ("event", error.event), ("table", error.table), ("row", error.row)]
        for (name, value) in details { if let value { setProperty(name, of: object, to: string(value)) } }
        return made
    }

    /// A JavaScript `Error` for a ``RelataError`` (a value that does not fit, a key in use):
    /// its description, and `relataKind` `invalidValue` or `constraint`.
    func makeError(_ error: RelataError) -> JSValueRef {
        let made = makeError(error.description)
        guard let object = JSValueToObject(ref, made, nil) else { return made }
        let kind: FailureKind = error.code == .constraintViolation ? .constraint : .invalidValue
        setProperty("relataKind", of: object, to: string(kind.rawValue))
        return made
    }

    func string(_ text: String) -> JSValueRef {
        Self.string(text, in: ref)
    }

    /// A JavaScript string made in `context`, any context of the machine.
    static func string(_ text: String, in context: JSContextRef) -> JSValueRef {
        JSString.with(text) { JSValueMakeString(context, $0) }
    }

    // MARK: Errors

    /// Turns a JavaScript exception into a ``ScriptError``, copying everything out of it at once.
    package func error(from exception: JSValueRef, file: String?) -> ScriptError {
        if machine.watchdog.fired {
            machine.watchdog.fired = false
            TimeLimitStops.shared.note()
            var description = describe(exception)
            description.name = "TimeLimit"
            description.message = "the script ran longer than the time limit (\(machine.timeLimit)) and was stopped; look for a loop that never ends"
            return description.error(file: file, kind: .timeLimitExceeded)
        }
        if let termination = machine.termination {
            machine.termination = nil
            return termination
        }
        return describe(exception).error(file: file)
    }

    /// Reads what Relata needs from an exception through the C API. A thrown value
    /// that is not an `Error` is described by its text (JSON for plain objects).
    package func describe(_ exception: JSValueRef) -> ExceptionDescription {
        let isError = (try? helper("isError")).flatMap { try? call($0, [exception]) }.map { JSValueToBoolean(ref, $0) } ?? false
        guard isError, let object = JSValueToObject(ref, exception, nil) else {
            return ExceptionDescription(name: nil, message: shown(exception))
        }
        func text(_ name: String) -> String? {
            let value = property(name, of: object)
            return JSValueIsUndefined(ref, value) ? nil : JSString.string(of: value, in: ref)
        }
        return ExceptionDescription(name: text("name") ?? "Error", message: text("message") ?? "",
                                    isFailure: JSValueToBoolean(ref, property("__relataFail", of: object)),
                                    stack: text("stack"), sourceURL: text("sourceURL"),
                                    line: integer(from: property("line", of: object)),
                                    column: integer(from: property("column", of: object)))
    }

    /// A value as a person reads it: strings as they are, objects as JSON.
    func shown(_ value: JSValueRef) -> String {
        if let show = try? helper("show"), let text = try? call(show, [value]), let shown = JSString.string(of: text, in: ref) {
            return shown
        }
        return JSString.string(of: value, in: ref) ?? "a value that cannot be shown"
    }
}

/// What Relata reads from a JavaScript exception: through the C API one property
/// at a time, or, for many at once, as one string a script built
/// (`__relataDescribe` in the rule bootstrap).
package struct ExceptionDescription {
    /// The error's `name`; nil when something other than an object was thrown.
    package var name: String?
    package var message: String
    var isFailure = false
    package var stack: String?
    var sourceURL: String?
    var line: Int?
    var column: Int?

    /// Parses the string `__relataDescribe` builds: fields separated by U+0000,
    /// or U+0001 then the text of a thrown value that is not an object.
    init(described text: String) {
        if text.hasPrefix("\u{1}") {
            self.init(name: nil, message: String(text.dropFirst()))
            return
        }
        let parts = text.parts(separatedBy: "\u{0}")
        func part(_ index: Int) -> String? { index < parts.count && !parts[index].isEmpty && parts[index] != "undefined" ? parts[index] : nil }
        self.init(name: part(0) ?? "Error", message: part(2) ?? "", isFailure: part(1) == "1", stack: part(3),
                  sourceURL: part(4), line: part(5).flatMap { Int($0) }, column: part(6).flatMap { Int($0) })
    }

    init(name: String?, message: String, isFailure: Bool = false, stack: String? = nil, sourceURL: String? = nil,
         line: Int? = nil, column: Int? = nil) {
        self.name = name
        self.message = message
        self.isFailure = isFailure
        self.stack = stack
        self.sourceURL = sourceURL
        self.line = line
        self.column = column
    }

    /// The ``ScriptError``: a rule failure, a syntax error or a runtime error, located
    /// at the innermost stack frame in a user's script (so `fail()` and host errors
    /// point at their caller), else at the exception's own `sourceURL`, `line` and `column`.
    func error(file: String?, kind: ScriptError.Kind? = nil) -> ScriptError {
        guard let name else { return ScriptError(kind ?? .runtime, "threw \(message) (a value that is not an Error)", file: file) }
        let kind = kind ?? (isFailure ? .ruleFailed : name == "SyntaxError" ? .syntax : .runtime)
        var error = ScriptError(kind, isFailure || name == "Error" || kind == .timeLimitExceeded ? message : "\(name): \(message)", file: file)
        let bootstrap = ScriptContext.bootstrapFile
        let frames = (stack ?? "").parts(separatedBy: "\n").filter { !$0.isEmpty && StackFrame($0)?.file != bootstrap }
        error.stack = frames.isEmpty ? nil : frames.joined(separator: "\n")
        if let frame = frames.lazy.compactMap(StackFrame.init).first {
            error.file = frame.file
            error.line = frame.line
            error.column = frame.column
            return error
        }
        if let sourceURL, sourceURL != bootstrap { error.file = sourceURL }
        error.line = line ?? error.line
        if kind != .syntax { error.column = column }
        return error
    }
}

/// One line of a JavaScriptCore stack: `function@file:line:column` or `file:line:column`.
package struct StackFrame {
    package let file: String
    package let line: Int
    package let column: Int

    /// The innermost frame in a user's script (not in Relata's bootstrap code).
    package static func innermostInScripts(of stack: String) -> StackFrame? {
        stack.parts(separatedBy: "\n").lazy.compactMap(StackFrame.init).first { $0.file != ScriptContext.bootstrapFile }
    }

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

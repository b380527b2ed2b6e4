internal import CJavaScriptCore
import Foundation
import Relata

/// A JavaScript engine: one JavaScriptCore virtual machine (a context group)
/// with a CPU time limit, `eval` turned off, and no file, network or process
/// access (JavaScriptCore's global object has none, and Relata adds none).
///
/// ```swift
/// let engine = try ScriptEngine()
/// try engine.evaluate("function double(x) { return x * 2 }", fileName: "math.js")
/// let result = try engine.call("double", [21])   // .integer(42)
/// ```
///
/// Errors are ``ScriptError``s with the script's file, line, column and stack.
///
/// **Threads.** An engine is not `Sendable`: JavaScriptCore lets any thread use a
/// virtual machine, but one at a time, so use an engine from one place at a time —
/// a thread, or a ``RuleRuntimeOwner`` that serializes the work of many tasks on a
/// thread of its own. Parallel work needs several engines (a ``RuleRuntimePool``).
/// Debug builds stop a thread that calls in while another thread's call is running.
public final class ScriptEngine {
    /// The longest a single call into JavaScript may run, in CPU time, before it
    /// is stopped with ``ScriptError/Kind/timeLimitExceeded`` (after between the limit and
    /// an eighth more: it is checked eight times per limit). The engine stays usable.
    public var timeLimit: Duration {
        get { machine.timeLimit }
        set { machine.timeLimit = newValue }
    }

    package let machine: VirtualMachine
    /// The engine's main context; ``ScriptContext`` makes more in the same VM.
    let context: ScriptContext

    /// Creates an engine.
    ///
    /// ```swift
    /// let engine = try ScriptEngine(timeLimit: .milliseconds(200))
    /// ```
    public init(timeLimit: Duration = .seconds(1)) throws {
        machine = VirtualMachine(timeLimit: timeLimit)
        context = try ScriptContext(machine: machine)
    }

    /// Runs a script and returns its completion value (NULL for anything that is not a field value).
    ///
    /// ```swift
    /// try engine.evaluate("const rate = 0.2", fileName: "setup.js")
    /// ```
    /// - Parameters:
    ///   - fileName: the name errors and stacks show for this script.
    ///   - line: the line number of the script's first line (for scripts embedded in a larger file).
    @discardableResult
    public func evaluate(_ source: String, fileName: String = "<script>", line: Int = 1) throws -> Value {
        let result = try context.evaluate(source, fileName: fileName, line: line)
        return try context.value(from: result)
    }

    /// Checks a script's syntax without running it.
    ///
    /// ```swift
    /// try engine.checkSyntax("function f( {", fileName: "f.js")   // throws ScriptError (.syntax, line 1)
    /// ```
    public func checkSyntax(_ source: String, fileName: String = "<script>", line: Int = 1) throws {
        try context.checkSyntax(source, fileName: fileName, line: line)
    }

    /// Calls a global function by name with field values as arguments.
    ///
    /// - Throws: ``ScriptError`` when there is no such function or the call throws.
    @discardableResult
    public func call(_ function: String, _ arguments: [Value] = []) throws -> Value {
        let callee = try context.globalFunction(named: function)
        let result = try context.call(callee) { made in
            for argument in arguments { made.append(context.jsValue(argument)) }
        }
        return try context.value(from: result)
    }

    /// True when the script defines a global function with this name.
    public func hasFunction(_ name: String) -> Bool {
        return (try? context.globalFunction(named: name)) != nil
    }

    /// What the sandbox enforces on this platform: the CPU time limit and `eval` turned off
    /// rely on JavaScriptCore functions that are not public API, looked up at run time.
    /// Both are available on Linux (WebKitGTK); an Apple platform may lack them.
    ///
    /// ```swift
    /// if !ScriptEngine.sandboxLimits.timeLimit { print("runaway scripts are not stopped here") }
    /// ```
    public static var sandboxLimits: (timeLimit: Bool, evalDisabled: Bool) {
        (PrivateJavaScriptCore.setExecutionTimeLimit != nil && PrivateJavaScriptCore.clearExecutionTimeLimit != nil,
         PrivateJavaScriptCore.setEvalEnabled != nil)
    }

    /// Runs JavaScriptCore's garbage collector now (tests use it to prove nothing still in use is freed).
    func collectGarbage() {
        JSGarbageCollect(context.ref)
    }
}

@available(*, unavailable, message: "A ScriptEngine is used from one place at a time; give it to a RuleRuntimeOwner to share it between tasks.")
extension ScriptEngine: Sendable {}

internal import CJavaScriptCore
import Relata

extension RuleRuntime {
    /// Makes `fail()` in a scope report its caller to `coverage`; installed before the script runs.
    func instrumentFailures(_ context: ScriptContext, for coverage: RuleCoverage, script: RuleScript) throws {
        coverage.register(script)
        context.setProperty("failReached", of: context.runtime, to: NativeFunction.make(in: context) { [weak coverage] context, _, arguments in
            let stack = arguments.first.flatMap { JSString.string(of: $0, in: context.ref) } ?? ""
            if let frame = StackFrame.innermostInScripts(of: stack) {
                coverage?.failReached(file: frame.file, line: frame.line, column: frame.column)
            }
            return JSValueMakeUndefined(context.ref)
        })
    }

    /// Makes a freshly loaded script report to `coverage`: each top-level function is
    /// wrapped to count its calls (handlers are found by name, so the wrappers are what
    /// events, batch loops and calculated fields call).
    func instrument(_ context: ScriptContext, for coverage: RuleCoverage, script: RuleScript) throws {
        let file = script.fileName
        context.setProperty("called", of: context.runtime, to: NativeFunction.make(in: context) { [weak coverage] context, _, arguments in
            if let name = arguments.first.flatMap({ JSString.string(of: $0, in: context.ref) }) { coverage?.functionCalled(name, in: file) }
            return JSValueMakeUndefined(context.ref)
        })
        let wrap = try context.compile("""
            function (names) {
                for (const name of names) {
                    const original = globalThis[name];
                    if (typeof original !== 'function') continue;
                    globalThis[name] = function (...args) { relata.called(name); return original.apply(this, args); };
                }
            }
            """)
        _ = try context.call(wrap) { $0.append(context.makeArray(coverage.functionNames(in: file)) { context.string($0) }) }
    }
}

import Foundation
import Relata
import RelataScript

/// How much a failing row costs in JavaScript: throwing, and reading the error's stack.
func runErrorCost() throws {
    let engine = try ScriptEngine(timeLimit: .seconds(30))
    try engine.evaluate("""
        function throwPlain(n) { let c = 0; for (let i = 0; i < n; i++) { try { throw { m: 'x' } } catch (e) { c++ } } return c }
        function throwError(n) { let c = 0; for (let i = 0; i < n; i++) { try { throw new Error('x') } catch (e) { c++ } } return c }
        function readStack(n) { let c = 0; for (let i = 0; i < n; i++) { try { throw new Error('x') } catch (e) { c += e.stack.length } } return c }
        function readLine(n) { let c = 0; for (let i = 0; i < n; i++) { try { throw new Error('x') } catch (e) { c += e.line } } return c }
        """, fileName: "cost.js")
    for name in ["throwPlain", "throwError", "readStack", "readLine"] {
        let time = try measure(repetitions: 3) { try engine.call(name, [10_000]) }
        print(name, String(format: "%.2f µs each", time * 1e6 / 10_000))
    }
}

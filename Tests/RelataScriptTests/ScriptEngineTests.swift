import Foundation
import Relata
import Testing
@testable import RelataScript

@Suite struct ScriptEngineTests {
    @Test func evaluateAndCall() throws {
        let engine = try ScriptEngine()
        try engine.evaluate("function double(x) { return x * 2 }", fileName: "math.js")
        #expect(try engine.call("double", [21]) == 42)
        #expect(try engine.evaluate("1.5 + 1") == 2.5)
        #expect(try engine.evaluate("'a' + 'b'") == "ab")
        #expect(try engine.evaluate("undefined") == .null)
        #expect(engine.hasFunction("double"))
        #expect(!engine.hasFunction("triple"))
    }
}

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

@Suite struct ScriptErrorTests {
    func scriptError(_ body: () throws -> Void) -> ScriptError? {
        do { try body() } catch let error as ScriptError { return error } catch { Issue.record("not a ScriptError: \(error)") }
        return nil
    }

    @Test func syntaxErrorsCarryFileAndLine() throws {
        let engine = try ScriptEngine()
        let error = scriptError { try engine.evaluate("let a = 1;\nlet b = ;\n", fileName: "broken.js") }
        #expect(error?.kind == .syntax)
        #expect(error?.file == "broken.js")
        #expect(error?.line == 2)
        #expect(error?.message.contains("SyntaxError") == true)
        let checked = scriptError { try engine.checkSyntax("function f( {", fileName: "f.js", line: 10) }
        #expect(checked?.kind == .syntax)
        #expect(checked?.line == 10)
    }

    @Test func runtimeErrorsCarryLineColumnAndStack() throws {
        let engine = try ScriptEngine()
        try engine.evaluate("""
            function inner() {
                return undefinedThing.x;
            }
            function outer() { return inner(); }
            """, fileName: "rules.js")
        let error = scriptError { try engine.call("outer") }
        #expect(error?.kind == .runtime)
        #expect(error?.file == "rules.js")
        #expect(error?.line == 2)
        #expect(error?.column != nil)
        #expect(error?.message.contains("ReferenceError") == true)
        #expect(error?.stack?.contains("inner@rules.js:2") == true)
        #expect(error?.stack?.contains("outer@rules.js:4") == true)
        #expect(error?.description.hasPrefix("rules.js:2:") == true)
    }

    @Test func thrownValuesThatAreNotErrors() throws {
        let engine = try ScriptEngine()
        let error = scriptError { try engine.evaluate("throw 'plain text'", fileName: "t.js") }
        #expect(error?.message.contains("plain text") == true)
    }

    @Test func evalAndFunctionConstructorAreDisabled() throws {
        let engine = try ScriptEngine()
        #expect(scriptError { try engine.evaluate("eval('1 + 1')") }?.message.contains("disabled") == true)
        #expect(scriptError { try engine.evaluate("new Function('return 1')()") }?.message.contains("disabled") == true)
    }

    @Test func noFileNetworkOrProcessAccess() throws {
        let engine = try ScriptEngine()
        for name in ["require", "process", "fetch", "XMLHttpRequest", "WebSocket", "print", "load", "read", "readFile", "import", "Deno", "Bun"] {
            #expect(try engine.evaluate("typeof globalThis['\(name)']") == "undefined", "\(name) must not exist")
        }
    }

    @Test func runawayLoopIsStoppedAndTheEngineStaysUsable() throws {
        let engine = try ScriptEngine(timeLimit: .milliseconds(200))
        try engine.evaluate("function spin() { while (true) {} }\nfunction ok() { return 7 }", fileName: "loop.js")
        let start = ContinuousClock.now
        let error = scriptError { try engine.call("spin") }
        let elapsed = ContinuousClock.now - start
        #expect(error?.kind == .timeLimitExceeded)
        #expect(error?.message.contains("time limit") == true)
        #expect(elapsed < .seconds(2))
        #expect(try engine.call("ok") == 7, "the engine keeps working")
        #expect(scriptError { try engine.call("spin") }?.kind == .timeLimitExceeded, "the limit fires again")
        #expect(try engine.call("ok") == 7)
    }

    @Test func missingFunction() throws {
        let engine = try ScriptEngine()
        #expect(scriptError { try engine.call("nope") }?.message.contains("no function named nope") == true)
    }
}

@Suite struct ScriptValueTests {
    @Test func everyValueKindRoundTrips() throws {
        let engine = try ScriptEngine()
        try engine.evaluate("function same(x) { return x }")
        let date = Date(timeIntervalSince1970: 1_700_000_000.5)
        let values: [Value] = [.null, 42, -7, 2.5, true, "héllo", .date(date), .blob(Data([1, 2, 255]))]
        for value in values {
            #expect(try engine.call("same", [value]) == value, "\(value)")
        }
        let guid = UUID()
        #expect(try engine.call("same", [.guid(guid)]) == .string(guid.uuidString), "GUIDs travel as strings")
        #expect(try engine.call("same", [.decimal(Decimal(string: "19.99")!)]) == 19.99, "decimals travel as numbers")
    }

    @Test func stringsComeBackWhole() throws {
        let engine = try ScriptEngine()
        #expect(try engine.evaluate("'a\\u0000b\\u0002c'") == .string("a\u{0}b\u{2}c"), "embedded NULs are kept")
        #expect(try engine.evaluate("'日本 😀 é'") == .string("日本 😀 é"))
        #expect(try engine.evaluate("'x\\uD800y'") == .string("x\u{FFFD}y"), "a lone surrogate becomes U+FFFD")
        #expect(try engine.evaluate("'long '.repeat(100000)") == .string(String(repeating: "long ", count: 100_000)))
    }

    @Test func blobsReachJavaScriptAsByteArraysTheEmptyOneToo() throws {
        let engine = try ScriptEngine()
        _ = try engine.evaluate("function describe(bytes) { return bytes.constructor.name + ':' + Array.from(bytes).join(',') }")
        #expect(try engine.call("describe", [.blob(Data([7, 0, 255]))]) == .string("Uint8Array:7,0,255"))
        #expect(try engine.call("describe", [.blob(Data())]) == .string("Uint8Array:"))
    }

    @Test func javascriptTypesSeenFromSwift() throws {
        let engine = try ScriptEngine()
        #expect(try engine.evaluate("new Date(0)") == .date(Date(timeIntervalSince1970: 0)))
        #expect(try engine.evaluate("new Uint8Array([1,2]).buffer") == .blob(Data([1, 2])))
        #expect(try engine.evaluate("null") == .null)
        #expect(try engine.evaluate("2 ** 60") == .double(pow(2, 60)), "beyond 2^53 numbers stay doubles")
        #expect(throws: ScriptError.self) { try engine.evaluate("({a: 1})") }
        #expect(throws: ScriptError.self) { try engine.evaluate("[1, 2]") }
    }

    @Test func fieldTypeHints() throws {
        let engine = try ScriptEngine()
        let context = engine.context
        let guid = UUID()
        #expect(try context.value(from: context.string(guid.uuidString), for: .guid) == .guid(guid))
        #expect(try context.value(from: context.string("2024-03-01"), for: .dateTime) == .date(Date(timeIntervalSince1970: 1_709_251_200)))
        #expect(try context.value(from: context.jsValue(19.99), for: .currency) == .decimal(Decimal(string: "19.99")!))
        #expect(try context.value(from: context.string("abc"), for: .integer) == "abc", "the table reports the mismatch")
    }
}

extension ScriptEngineTests {
    /// The time limit and `eval` switch are JavaScriptCore functions looked up at run time (not linked);
    /// WebKitGTK exports both, so on Linux the sandbox is whole.
    @Test func theSandboxFunctionsAreFoundAtRunTime() throws {
        #if os(Linux)
        #expect(ScriptEngine.sandboxLimits.timeLimit)
        #expect(ScriptEngine.sandboxLimits.evalDisabled)
        #endif
        let engine = try ScriptEngine(timeLimit: .milliseconds(100))
        if ScriptEngine.sandboxLimits.evalDisabled {
            #expect(throws: ScriptError.self) { try engine.evaluate("eval('1 + 1')") }
        }
        if ScriptEngine.sandboxLimits.timeLimit {
            #expect((scriptError { try engine.evaluate("while (true) {}") })?.kind == .timeLimitExceeded)
        }
    }
}

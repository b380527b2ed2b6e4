internal import CJavaScriptCore
import Foundation
import Logging
import Relata
import RelataScript

/// Runs rule test files — JavaScript files that call `test(name, body)` — against
/// a schema: each test gets a fresh ``LocalDataAdapter`` with the schema's data
/// and the file's fixtures, makes edits through the rules and checks the outcome.
/// The format is documented in `Documentation/RuleTests.md`.
///
/// ```swift
/// let runner = try RuleTestRunner(schema: Schema(contentsOf: schemaURL))
/// let file = try runner.load(URL(fileURLWithPath: "tests/Orders.test.js"))
/// for result in runner.run(file) { print(result.summary) }
/// ```
public final class RuleTestRunner {
    public let schema: Schema
    public let engine: ScriptEngine
    /// When set, records what the rules ran over every test (see ``RuleCoverage``).
    public let coverage: RuleCoverage?
    /// Where the rules' `log(…)` goes, and the test files'.
    public let logger: Logger
    /// The session each test starts with (a test may change it with `setSession`).
    public let session: Session
    /// The adapter of the test that is running.
    private var current: LocalDataAdapter?

    /// - Parameter session: the session each test starts with; the schema file's `session` when nil.
    public init(schema: Schema, engine: ScriptEngine? = nil, coverage: RuleCoverage? = nil,
                logger: Logger = Logger(label: "relata.rules"), session: Session? = nil) throws {
        self.schema = schema
        self.engine = try engine ?? ScriptEngine()
        self.coverage = coverage
        self.logger = logger
        self.session = try session ?? schema.defaultSession()
    }

    /// A loaded test file: its tests, ready to run.
    public final class File {
        /// The name results show (the path as given to ``load(_:name:)``).
        public let name: String
        /// The tests, in the order the file declares them.
        public let tests: [(name: String, line: Int)]
        fileprivate let context: ScriptContext
        fileprivate let bodies: [JSObjectRef]
        fileprivate let fixtures: [(table: String, rows: [JSValueRef])]

        fileprivate init(name: String, tests: [(name: String, line: Int)], context: ScriptContext, bodies: [JSObjectRef],
                         fixtures: [(table: String, rows: [JSValueRef])]) {
            self.name = name
            self.tests = tests
            self.context = context
            self.bodies = bodies
            self.fixtures = fixtures
        }
    }

    /// Reads a test file and registers its tests (its top level runs now).
    ///
    /// - Throws: ``ScriptError`` with the file, line and column for a syntax error or
    ///   an error at the file's top level; ``RelataError/Code/fileFailed`` naming the path
    ///   when the file is missing, a folder, unreadable or not UTF-8.
    public func load(_ url: URL, name: String? = nil) throws -> File {
        try load(source: InputFile.text(at: url, what: "test file"), name: name ?? url.path)
    }

    /// Registers the tests of test source text.
    public func load(source: String, name: String) throws -> File {
        let context = try ScriptContext(machine: engine.machine)
        try context.install(RuleTestLibrary.source)
        installEditing(in: context)
        _ = try context.evaluate(source, fileName: name, line: 1)
        // What `test` and `fixture` recorded lives where the file cannot reach; it is still read defensively.
        var tests: [(name: String, line: Int)] = []
        var bodies: [JSObjectRef] = []
        for entry in context.objects(in: context.property("tests", of: context.runtime)) {
            guard let body = JSValueToObject(context.ref, context.property("body", of: entry), nil), JSObjectIsFunction(context.ref, body) else {
                continue
            }
            let stack = JSString.string(of: context.property("stack", of: entry), in: context.ref) ?? ""
            tests.append((JSString.string(of: context.property("name", of: entry), in: context.ref) ?? "",
                          StackFrame.innermostInScripts(of: stack)?.line ?? 0))
            bodies.append(context.protect(body))
        }
        var fixtures: [(table: String, rows: [JSValueRef])] = []
        for entry in context.objects(in: context.property("fixtures", of: context.runtime)) {
            let table = JSString.string(of: context.property("table", of: entry), in: context.ref) ?? ""
            // Each row is kept alive itself: the file may empty the array it passed.
            let rows = context.property("rows", of: entry)
            let values = JSValueToObject(context.ref, rows, nil).map { array in
                (0..<context.length(of: array)).map { context.protect(context.element($0, of: array)) }
            } ?? []
            fixtures.append((table, values))
        }
        return File(name: name, tests: tests, context: context, bodies: bodies, fixtures: fixtures)
    }

    /// Runs a file's tests (those whose name `filter` accepts), each on a fresh adapter.
    public func run(_ file: File, filter: (String) -> Bool = { _ in true },
                    progress: (RuleTestResult) -> Void = { _ in }) -> [RuleTestResult] {
        var results: [RuleTestResult] = []
        for (index, test) in file.tests.enumerated() where filter(test.name) {
            let started = ContinuousClock.now
            engine.machine.termination = nil
            var result = RuleTestResult(file: file.name, test: test.name, line: test.line, passed: true, milliseconds: 0)
            do {
                let adapter = try schema.makeAdapter(engine: engine, logger: logger, coverage: coverage)
                adapter.session = session
                RuleRuntime.installSession(session, in: file.context)
                try loadFixtures(of: file, into: adapter)
                current = adapter
                defer { current = nil }
                if let thrown = try outcome(of: file.bodies[index], in: file) {
                    result.passed = false
                    (result.kind, result.message, result.location) = describe(thrown, in: file)
                }
            } catch {
                result.passed = false
                result.kind = .testError
                result.message = "the test could not start: \(error)"
                result.location = "\(file.name):\(test.line)"
            }
            let elapsed = ContinuousClock.now - started
            result.milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
            results.append(result)
            progress(result)
        }
        return results
    }

    /// Whether a test file's code sees a global of this name.
    func hasGlobal(_ name: String, in file: File) -> Bool {
        file.context.hasGlobal(name)
    }

    /// What a test body threw, awaiting a promise it returns; nil when it passed.
    private func outcome(of body: JSObjectRef, in file: File) throws -> JSValueRef? {
        let context = file.context
        let (returned, thrown) = context.outcome(calling: try context.helper("runTest"), [body])
        if let thrown { return thrown }
        // The call returned, so JavaScriptCore has run the promise jobs it queued.
        guard let returned, let record = JSValueToObject(context.ref, returned, nil), JSValueIsObject(context.ref, returned) else { return nil }
        guard JSValueToBoolean(context.ref, context.property("settled", of: record)) else {
            return context.makeError("the test returned a promise that never settled (rules and tests have no timers or I/O to wait for)")
        }
        return JSValueToBoolean(context.ref, context.property("rejected", of: record)) ? context.property("error", of: record) : nil
    }

    // MARK: The editing API of test files

    private func installEditing(in context: ScriptContext) {
        let lda = RuleRuntime.makeDataAccess(in: context) { [weak self] _ in
            guard let adapter = self?.current else {
                throw ScriptError(.runtime, "tables can be changed only inside a test(…) body, where each test has its own data")
            }
            return adapter.data
        }
        context.setProperty("lda", of: context.global, to: lda, readOnly: true)
        for (global, function) in [("insert", "insert"), ("update", "update"), ("remove", "remove"), ("select", "select"),
                                   ("selectWhere", "selectWhere")] {
            context.setProperty(global, of: context.global, to: context.property(function, of: lda), readOnly: true)
        }
        RuleRuntime.installLog(in: context, logger: logger, table: nil)
        RuleRuntime.installSession(session, in: context)
        context.setProperty("setSession", of: context.runtime, to: NativeFunction.make(in: context) { [weak self] context, _, arguments in
            guard let adapter = self?.current else { throw ScriptError(.runtime, "setSession(…) works only inside a test(…) body") }
            let session = try Self.session(from: arguments.first, in: context)
            adapter.session = session
            RuleRuntime.installSession(session, in: context)
            return JSValueMakeUndefined(context.ref)
        })
        context.defineFunction("apply") { [weak self] context, _, _ in
            guard let adapter = self?.current else { throw ScriptError(.runtime, "apply() works only inside a test(…) body") }
            let deltas = try adapter.applyChanges(for: adapter.tables)
            if let failure = ScriptError(firstFailureIn: deltas) { throw failure }
            return JSValueMakeNumber(context.ref, Double(deltas.changeCount))
        }
    }

    /// The session `setSession({ user, roles, values })` describes.
    private static func session(from value: JSValueRef?, in context: ScriptContext) throws -> Session {
        func invalid(_ what: String) -> ScriptError { ScriptError(.runtime, "setSession({ user, roles, values }): \(what)") }
        guard let value, JSValueIsObject(context.ref, value), let object = JSValueToObject(context.ref, value, nil) else {
            throw invalid("give an object")
        }
        var session = Session()
        let values = context.property("values", of: object)
        if !JSValueIsUndefined(context.ref, values), !JSValueIsNull(context.ref, values) {
            session.values = try context.dictionary(from: values, fields: nil)
        }
        let user = context.property("user", of: object)
        if !JSValueIsUndefined(context.ref, user) {
            guard JSValueIsString(context.ref, user), let name = JSString.string(of: user, in: context.ref) else { throw invalid("user is not a string") }
            session.values["User"] = .string(name)
        }
        let roles = context.property("roles", of: object)
        if !JSValueIsUndefined(context.ref, roles) {
            guard JSValueIsArray(context.ref, roles), let array = JSValueToObject(context.ref, roles, nil) else { throw invalid("roles is not an array") }
            session.roles = try (0..<min(context.length(of: array), 1000)).map { index in
                let role = context.element(index, of: array)
                guard JSValueIsString(context.ref, role), let name = JSString.string(of: role, in: context.ref) else {
                    throw invalid("roles[\(index)] is not a string")
                }
                return name
            }
        }
        return session
    }

    private func loadFixtures(of file: File, into adapter: LocalDataAdapter) throws {
        let context = file.context
        for (tableName, rows) in file.fixtures {
            guard let table = adapter.table(named: tableName) else {
                throw ScriptError(.runtime, "fixture('\(tableName)', …): the schema has no such table (tables: \(adapter.tables.map(\.name).joined(separator: ", ")))", file: file.name)
            }
            let values = try rows.enumerated().map { position, row in
                do {
                    return try context.dictionary(from: row, fields: table.fields)
                } catch let error as ScriptError {
                    throw ScriptError(.runtime, "fixture('\(table.name)', …), row \(position + 1): \(error.message)", file: file.name)
                }
            }
            do {
                try table.loadRows(named: values)
            } catch let error as RelataError {
                throw ScriptError(.runtime, "fixture('\(table.name)', …): \(error)", file: file.name)
            }
        }
    }

    /// What went wrong in a test, of what kind, and where in the test file.
    private func describe(_ thrown: JSValueRef, in file: File) -> (kind: FailureKind, message: String, location: String?) {
        let context = file.context
        if context.machine.watchdog.fired || context.machine.termination != nil {
            let error = context.error(from: thrown, file: file.name)
            let origin = [error.location, error.event.map { "in \($0)" }].compactMap { $0 }.joined(separator: " ")
            return (.ruleError, "a rule is broken: " + error.message + (origin.isEmpty ? "" : " (\(origin))"), error.location)
        }
        let description = context.describe(thrown)
        let frame = description.stack.flatMap { StackFrame.innermostInScripts(of: $0) }
        let location = frame.map { "\($0.file):\($0.line):\($0.column)" }
        if description.name == "ExpectationFailure" { return (.expectation, description.message, location) }
        let error = context.error(from: thrown, file: file.name)
        guard description.name != nil, let object = JSValueToObject(context.ref, thrown, nil), JSValueIsObject(context.ref, thrown) else {
            return (.testError, "the test threw \(description.message)", location)
        }
        func text(_ name: String) -> String? {
            let value = context.property(name, of: object)
            return JSValueIsString(context.ref, value) ? JSString.string(of: value, in: context.ref) : nil
        }
        let origin = [text("location"), text("event").map { "in \($0)" }].compactMap { $0 }.joined(separator: " ")
        let suffix = origin.isEmpty ? "" : " (\(origin))"
        switch text("relataKind") {
        case "ruleFailed"?: return (.refusal, "unexpected rule failure: \(description.message)\(suffix)", location)
        case let kind? where FailureKind(rawValue: kind) != nil:
            return (FailureKind(rawValue: kind) ?? .invalidValue, "unexpected error: \(description.message)\(suffix)", location)
        case _?: return (.ruleError, "a rule is broken: \(description.message)\(suffix)", location)
        case nil: return (.testError, "\(description.name ?? "Error"): \(description.message)", error.location ?? location)
        }
    }
}

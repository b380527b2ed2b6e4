import Foundation
import Relata
import RelataScript
import RelataTools

/// Expects `body` to be refused by a rule's `fail(…)` whose message contains
/// `text` (any message when nil). Otherwise records a test failure — in Swift
/// Testing or XCTest, whichever is running — that shows what happened instead,
/// with the rule's message and script location.
///
/// ```swift
/// expectRuleFailure(matching: "at least 1") {
///     try pcTrade.insert("OrderDetails", ["OrderId": 1, "ProductId": 2, "Quantity": 0])
/// }
/// ```
/// - Returns: the rule's error, when it failed as expected.
@discardableResult
public func expectRuleFailure(matching text: String? = nil, _ body: () throws -> Void,
                              fileID: String = #fileID, filePath: StaticString = #filePath,
                              line: UInt = #line, column: UInt = #column) -> ScriptError? {
    let place = TestFailure.Place(fileID: fileID, filePath: filePath, line: line, column: column)
    do {
        try body()
    } catch let error as ScriptError where error.kind == .ruleFailed && (text.map { error.message.contains($0) } ?? true) {
        return error
    } catch {
        TestFailure.record(RuleOutcomeMessage.expectedFailure(matching: text, got: error), at: place)
        return nil
    }
    TestFailure.record(RuleOutcomeMessage.expectedFailure(matching: text, got: nil), at: place)
    return nil
}

/// Expects the rules to accept what `body` does; records a failure showing the
/// rule's message and script location otherwise.
///
/// ```swift
/// let line = expectRulesPass { try pcTrade.insert("OrderDetails", ["OrderId": 1, "ProductId": 2]) }
/// ```
/// - Returns: what `body` returned, or nil when it threw.
@discardableResult
public func expectRulesPass<Result>(_ body: () throws -> Result,
                                    fileID: String = #fileID, filePath: StaticString = #filePath,
                                    line: UInt = #line, column: UInt = #column) -> Result? {
    do {
        return try body()
    } catch {
        TestFailure.record(RuleOutcomeMessage.expectedPass(got: error),
                           at: TestFailure.Place(fileID: fileID, filePath: filePath, line: line, column: column))
        return nil
    }
}

/// Expects a field of a row — stored, calculated or lookup — to hold a value after the rules.
///
/// ```swift
/// expectValue(line, "LineTotal", 108)
/// ```
public func expectValue(_ row: DataTableRow, _ field: String, _ expected: Value,
                        fileID: String = #fileID, filePath: StaticString = #filePath,
                        line: UInt = #line, column: UInt = #column) {
    let place = TestFailure.Place(fileID: fileID, filePath: filePath, line: line, column: column)
    do {
        let actual = try row.value(forKey: field)
        if !RuleOutcomeMessage.same(actual, expected) {
            TestFailure.record(RuleOutcomeMessage.unexpectedValue(row: row.label, table: row.table.name, field: field,
                                                                  expected: expected, actual: actual), at: place)
        }
    } catch {
        TestFailure.record("\(row.table.name).\(field) could not be read: \(error)", at: place)
    }
}

/// Runs JavaScript rule test files (`relata test`'s format) inside a Swift test:
/// each failing JavaScript test is recorded as a failure with its message and location.
///
/// ```swift
/// @Test func pcTradeRuleFiles() throws {
///     try expectRuleTestsPass(schema: schemaURL)
/// }
/// ```
/// - Parameters:
///   - files: the test files; by default the ones the schema lists under `tests`.
///   - session: the session each test starts with; the schema file's `session` when nil.
/// - Returns: every result, passing ones included.
@discardableResult
public func expectRuleTestsPass(schema url: URL, files: [URL]? = nil, session: Session? = nil,
                                fileID: String = #fileID, filePath: StaticString = #filePath,
                                line: UInt = #line, column: UInt = #column) throws -> [RuleTestResult] {
    let schema = try Schema(contentsOf: url)
    let runner = try RuleTestRunner(schema: schema, session: session)
    var results: [RuleTestResult] = []
    for file in try files ?? schema.testFiles() {
        results += runner.run(try runner.load(file, name: file.lastPathComponent))
    }
    for result in results where !result.passed {
        TestFailure.record("\(result.file) › \(result.test): \(result.message ?? "failed")\(result.location.map { " (\($0))" } ?? "")",
                           at: TestFailure.Place(fileID: fileID, filePath: filePath, line: line, column: column))
    }
    return results
}

/// The texts of the failures the expectations record.
public enum RuleOutcomeMessage {
    public static func expectedFailure(matching text: String?, got error: (any Error)?) -> String {
        let wanted = "a rule failure" + (text.map { " containing '\($0)'" } ?? "")
        guard let error else { return "expected \(wanted), but the rules passed" }
        return "expected \(wanted), got \(describe(error))"
    }

    public static func expectedPass(got error: any Error) -> String {
        "expected the rules to pass, got \(describe(error))"
    }

    public static func unexpectedValue(row: String, table: String, field: String, expected: Value, actual: Value) -> String {
        "\(table).\(field), \(row): expected \(expected), got \(actual)"
    }

    /// An error as a test failure shows it: a rule failure with its message, script
    /// location, event and row; other errors as they describe themselves.
    public static func describe(_ error: any Error) -> String {
        guard let error = error as? ScriptError else { return "the error: \(error)" }
        let kind = error.kind == .ruleFailed ? "the rule failure" : "the script error"
        let origin = [error.location, error.event.map { "in \($0)" }, error.table, error.row].compactMap { $0 }.joined(separator: ", ")
        return "\(kind) '\(error.message)'" + (origin.isEmpty ? "" : " (\(origin))")
    }

    /// Equal values, numbers compared across integer, float and decimal.
    static func same(_ a: Value, _ b: Value) -> Bool {
        if a == b { return true }
        if let x = a.doubleValue, let y = b.doubleValue, !a.isNull, !b.isNull { return abs(x - y) < 1e-9 * max(1, abs(x), abs(y)) }
        return false
    }
}

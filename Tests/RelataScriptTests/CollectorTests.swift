import Foundation
import Relata
import Testing
@testable import RelataScript

/// JavaScriptCore's collector sees the stack and registers, not Swift's heap: every value
/// Relata makes for a script must stay reachable while it makes the next. These tests make
/// many such values (row events with originals, delta views, arrays); `Scripts/test.sh`
/// runs the rules suites again with JavaScriptCore collecting every few allocations
/// (`JSC_slowPathAllocsBetweenGCs`), where a value left unreachable crashes the run.
@Suite struct CollectorTests {
    static let fields = [
        FieldDefinition("ItemId", .integer, primaryKey: true), FieldDefinition("Name", .string, size: 40),
        FieldDefinition("Quantity", .integer), FieldDefinition("UnitPrice", .float),
    ]
    static let rules = """
        function beforeUpdate(row, old) {
            if (row.Quantity <= 0) fail('Quantity must be positive');
            if (row.UnitPrice < old.UnitPrice / 2) fail('the price fell by more than half');
        }
        function beforeProcessDeltaChange(delta, change) {
            if (change.newValues.Quantity > 100000) fail('at most 100000 per line');
        }
        """

    static func adapter(rows count: Int) throws -> LocalDataAdapter {
        let schema = try SchemaDefinition(name: "Items", tables: [
            TableDefinition(name: "Lines", fields: fields, script: RuleScript(rules, fileName: "lines.js")),
        ])
        let table = try DataTable(name: "Lines", fields: fields)
        var rows: [[Value]] = []
        for index in 0..<count {
            let price = Double(index % 1000) / 10 + 1
            rows.append([.integer(Int64(index + 1)), .string("Item \(index + 1)"), .integer(Int64(index % 50 + 1)), .double(price)])
        }
        try table.loadRows(rows)
        return try LocalDataAdapter(schema: schema, tables: [table])
    }

    /// Edits fire `beforeUpdate(row, old)` row by row, then validation shows every change to
    /// the delta rules; the adapter moves between threads as the task suspends in between.
    @Test func rowEventsAndDeltaViewsSurviveCollections() async throws {
        let count = 1_000
        let adapter = try Self.adapter(rows: count)
        let lines = try #require(adapter.table(named: "Lines"))
        for round in 1...3 {
            for (index, row) in lines.rows.enumerated() {
                try row.setValue(.integer((row["Quantity"].integerValue ?? 0) + 1), forKey: "Quantity")
                if index % 500 == 0 { try await Task.sleep(for: .milliseconds(1)) }
            }
            let verdicts = try adapter.validateApply(for: [lines])
            #expect(verdicts.flatMap(\.changes).filter { $0.status == .resolved }.count == count, "round \(round)")
        }
        let error = scriptError { try lines.rows[0].setValue(.integer(0), forKey: "Quantity") }
        #expect(error?.message == "Quantity must be positive")
    }
}

/// ``RootedValues`` keeps a call's arguments alive while the next is made: the first few in
/// the list itself (a local variable, on the stack the collector scans), the rest protected.
/// Each argument here is an object nothing else holds, and a full collection runs after each
/// is made; the script then reads every one.
@Suite struct RootedValuesTests {
    /// JavaScriptCore's synchronous full collection (exported by WebKitGTK's library, for debugging).
    typealias Collect = @convention(c) (OpaquePointer?) -> Void
    static let collect: Collect? = PrivateJavaScriptCore.address(of: "JSSynchronousGarbageCollectForDebugging")
        .map { unsafeBitCast($0, to: Collect.self) }

    @Test(arguments: [1, 2, RootedValues.inlineCapacity, RootedValues.inlineCapacity + 1, 3 * RootedValues.inlineCapacity])
    func argumentsSurviveACollectionAfterEachIsMade(count: Int) throws {
        let collect = try #require(Self.collect, "this JavaScriptCore has no synchronous collection to test with")
        let engine = try ScriptEngine()
        let context = engine.context
        _ = try engine.evaluate("""
            globalThis.make = (n) => ({ text: 'object ' + n, number: n });
            globalThis.readAll = (...objects) => objects.map(o => o.text + ':' + o.number).join(' ');
            undefined;
            """)
        let make = try context.globalFunction(named: "make")
        let read = try context.call(try context.globalFunction(named: "readAll")) { arguments in
            for index in 0..<count {
                // A new object: once the call returns, only the list holds it.
                arguments.append(try context.call(make, [context.jsValue(.integer(Int64(index)))]))
                collect(context.ref)
            }
            #expect(arguments.count == count)
        }
        let expected = (0..<count).map { "object \($0):\($0)" }.joined(separator: " ")
        #expect(try context.value(from: read) == .string(expected))
    }
}

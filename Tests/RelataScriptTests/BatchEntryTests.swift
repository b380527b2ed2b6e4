import Foundation
import Relata
import Testing
@testable import RelataScript
import RelataTestSupport

/// `performBatchUpdates` on a table with JavaScript rules runs its edits' rule calls nested in one
/// entry into JavaScript (`VirtualMachine.entered(in:_:)`): each edit still gets its rule's verdict
/// and a time limit of its own.
@Suite(.timeLimit(.minutes(1))) struct BatchEntryTests {
    static let fields = [FieldDefinition("ItemId", .integer, primaryKey: true), FieldDefinition("Quantity", .integer)]

    /// `count` items with quantities 1…count, under `rules`, in an adapter whose engine has `limit`.
    static func items(_ count: Int, rules: String, limit: Duration = .seconds(10)) throws -> (LocalDataAdapter, DataTable) {
        let adapter = try LocalDataAdapter(engine: ScriptEngine(timeLimit: limit))
        let rows = (1...count).map { "\($0),\($0)" }.joined(separator: "\n")
        let items = try adapter.addTable(name: "Items", fields: fields, csv: "ItemId,Quantity\n" + rows + "\n",
                                         script: RuleScript(rules, fileName: "Items.js"))
        return (adapter, items)
    }

    /// Sets each row's quantity to `value(index)` inside one batch; the error each edit threw, by row.
    static func editInOneBatch(_ items: DataTable, _ value: (Int) -> Int) -> [Int: ScriptError] {
        items.performBatchUpdates {
            var errors: [Int: ScriptError] = [:]
            for (index, row) in items.rows.enumerated() {
                do {
                    try row.setValue(.integer(Int64(value(index))), forKey: "Quantity")
                } catch {
                    errors[index] = error as? ScriptError
                }
            }
            return errors
        }
    }

    @Test func eachEditOfABatchGetsItsRulesVerdictAndObserversAreToldOnce() throws {
        let (adapter, items) = try Self.items(6, rules: """
            function beforeUpdate(row, old) {
                if (row.Quantity <= 0) fail('Quantity must be positive, was ' + old.Quantity);
            }
            """)
        var events: [DataTableEvent] = []
        let observation = items.observe { events.append($0) }
        let errors = withExtendedLifetime(adapter) { Self.editInOneBatch(items) { $0 % 2 == 0 ? 10 + $0 : 0 } }
        #expect(errors.keys.sorted() == [1, 3, 5])
        #expect(errors[3]?.message == "Quantity must be positive, was 4")
        #expect(errors[3]?.line == 2)
        #expect(items.rows.map { $0["Quantity"] } == [10, 2, 12, 4, 14, 6])
        #expect(items.rows.map(\.rowState) == [.modified, .unchanged, .modified, .unchanged, .modified, .unchanged])
        #expect(events == [.tableChanged, .indexMustUpdate])
        observation.cancel()
    }

    @Test func aRunawayRuleFailsItsOwnEditAndTheLaterEditsOfTheBatchKeepTheirLimit() async throws {
        // Two runaways in one batch: the second is stopped too, so the limit is armed again
        // after the first (JavaScriptCore arms it only on an outermost entry). Run on a thread of
        // its own: were the second never stopped, the test fails instead of hanging the run.
        struct Outcome: Sendable { var errors: [Int: ScriptError.Kind] = [:], quantities: [Value] = [], afterwards: [Value] = [] }
        let ended = ConditionFlag()
        let run = OnThread { () throws -> Outcome in
            defer { ended.set() }
            let (adapter, items) = try Self.items(8, rules: """
                function beforeUpdate(row, old) { if (old.Quantity === 3 || old.Quantity === 6) { while (true) {} } }
                """, limit: .milliseconds(200))
            var outcome = Outcome()
            outcome.errors = withExtendedLifetime(adapter) { Self.editInOneBatch(items) { 100 + $0 } }.mapValues(\.kind)
            outcome.quantities = items.rows.map { $0["Quantity"] }
            // After the batch, rules and scripts run as before.
            try items.rows[0].setValue(7, forKey: "Quantity")
            outcome.afterwards = [items.rows[0]["Quantity"], try adapter.engine.evaluate("1 + 1")]
            return outcome
        }
        guard await ended.waited(for: .seconds(30)) else {
            Issue.record("the batch did not end: a runaway after the first was not stopped")
            return
        }
        let outcome = try await run.value
        #expect(outcome.errors == [2: .timeLimitExceeded, 5: .timeLimitExceeded])
        #expect(outcome.quantities == [100, 101, 3, 103, 104, 6, 106, 107])
        #expect(outcome.afterwards == [7, 2])
    }

    /// A runaway stopped inside a batch must leave nothing of its stop for the batch's later calls:
    /// rules with loops of their own after it run to their end. (Row objects made as JavaScript
    /// proxies once left JavaScriptCore's termination pending for the next loop, now and then.)
    @Test(arguments: [
        "function beforeUpdate(row, old) { let s = 0; for (let i = 0; i < 100000; i++) s += i; if (old.Quantity === 3) { while (true) {} } }",
        "function beforeUpdate(row, old) { if (old.Quantity === 3) { while (true) {} } let s = 0; for (let i = 0; i < 100000; i++) s += i; }",
        "function beforePost(row) { if (row.Quantity === 102) { while (true) {} } let s = 0; for (let i = 0; i < 100000; i++) s += i; }",
    ])
    func rulesWithLoopsAfterARunawayInTheSameBatchRunToTheirEnd(_ rules: String) throws {
        let (adapter, items) = try Self.items(8, rules: rules, limit: .milliseconds(200))
        let errors = withExtendedLifetime(adapter) { Self.editInOneBatch(items) { 100 + $0 } }
        #expect(errors.mapValues(\.kind) == [2: .timeLimitExceeded], "\(errors.mapValues(\.message))")
        #expect(items.rows.map { $0["Quantity"] } == [100, 101, 3, 103, 104, 105, 106, 107])
    }

    @Test func eachCallOfABatchHasTheWholeLimitNotTheirSum() throws {
        // Each call runs a third of the limit; the batch runs many limits in one entry.
        let (adapter, items) = try Self.items(5, rules: """
            function beforeUpdate(row, old) { const end = Date.now() + 40; while (Date.now() < end) {} }
            """, limit: .milliseconds(120))
        let errors = withExtendedLifetime(adapter) { Self.editInOneBatch(items) { 100 + $0 } }
        #expect(errors.isEmpty, "\(errors.values.map(\.message))")
        #expect(items.rows.map { $0["Quantity"] } == [100, 101, 102, 103, 104])
    }

    @Test func anErrorTheBatchThrowsReachesItsCallerAndTheEditsBeforeItStand() throws {
        struct Stop: Error {}
        let (adapter, items) = try Self.items(3, rules: "function beforeUpdate(row, old) { if (row.Quantity < 0) fail('negative'); }")
        try withExtendedLifetime(adapter) {
            #expect(throws: Stop.self) {
                try items.performBatchUpdates {
                    try items.rows[0].setValue(50, forKey: "Quantity")
                    throw Stop()
                }
            }
            #expect(items.rows[0]["Quantity"] == 50)
            #expect(throws: ScriptError.self) { try items.rows[1].setValue(-1, forKey: "Quantity") }
            // A batch inside a batch, and a batch that returns a value.
            let total = try items.performBatchUpdates {
                try items.performBatchUpdates { try items.rows[1].setValue(60, forKey: "Quantity") }
                return items.rows.reduce(0) { $0 + ($1["Quantity"].integerValue ?? 0) }
            }
            #expect(total == 50 + 60 + 3)
        }
    }

    @Test func microtasksARuleQueuesRunWhenTheBatchEnds() throws {
        // Setting 99 asks the rules' script how many of its microtasks have run.
        let (adapter, items) = try Self.items(4, rules: """
            let settled = 0;
            function beforeUpdate(row, old) {
                if (row.Quantity === 99) fail('settled ' + settled);
                Promise.resolve().then(() => { settled += 1; });
            }
            """)
        func settled() -> String? { scriptError { try items.rows[3].setValue(99, forKey: "Quantity") }?.message }
        try withExtendedLifetime(adapter) {
            let inside = try items.performBatchUpdates {
                for row in items.rows.prefix(3) { try row.setValue(9, forKey: "Quantity") }
                return settled()
            }
            #expect(inside == "settled 0")
            #expect(settled() == "settled 3")
            // Outside a batch, each call's microtasks run when it returns.
            try items.rows[0].setValue(1, forKey: "Quantity")
            #expect(settled() == "settled 4")
        }
    }

    @Test func aBatchOnATableWhoseAdapterIsGoneRunsAsItIs() throws {
        var adapter: LocalDataAdapter? = try Self.items(2, rules: "function beforeUpdate(row, old) {}").0
        let items = try #require(adapter?.table(named: "Items"))
        adapter = nil
        let ran = items.performBatchUpdates { true }
        #expect(ran)
    }
}

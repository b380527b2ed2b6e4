import Foundation
import Relata
import Testing
@testable import RelataScript

/// A server's replay of many edits runs their rules nested in one entry into JavaScript; each
/// rule call keeps a time limit of its own there, as when it enters alone.
@Suite(.timeLimit(.minutes(1))) struct ReplayTimeLimitTests {
    static let fields = [FieldDefinition("ItemId", .integer, primaryKey: true), FieldDefinition("Quantity", .integer)]

    /// `count` stored rows, a runtime with `limit` running `rules`, and the client's delta
    /// raising every row's quantity by one (made without rules, as a client that skipped them).
    static func replay(_ count: Int, rules: String, limit: Duration) throws -> (answer: [Delta], stored: DataTable) {
        let rows = (1...count).map { "\($0),\($0)" }.joined(separator: "\n")
        let stored = try DataTable(name: "Items", fields: fields, csv: "ItemId,Quantity\n" + rows + "\n")
        let client = try DataTable(name: "Items", fields: fields, csv: "ItemId,Quantity\n" + rows + "\n")
        for row in client.rows { try row.setValue(.integer((row["Quantity"].integerValue ?? 0) + 1), forKey: "Quantity") }
        let data = TableDataAccess(tables: [stored])
        let runtime = try RuleRuntime(engine: ScriptEngine(timeLimit: limit))
        try runtime.load(RuleScript(rules, fileName: "Items.js"), forTable: "Items")
        let answer = try runtime.withEnvironment(RuleEnvironment(session: Session(), isServer: true, dataAccess: data)) {
            let replayed = EditReplay(runtime: runtime).replay([try client.makeDelta()], on: data) { name in
                runtime.attachRules(to: [stored])
                return stored
            }
            return replayed.answer(try DeltaProcessor(runtime: runtime).process(replayed.deltas, store: TableStore(data: data)))
        }
        return (answer, stored)
    }

    @Test func aRunawayRuleFailsItsOwnEditAndTheEditsAfterItAreMade() throws {
        let count = 2 * RuleRuntime.stepsWorthOneEntry
        let (answer, stored) = try Self.replay(count, rules: """
            function beforeUpdate(row, old) { if (old.Quantity === 20) { while (true) {} } }
            """, limit: .milliseconds(200))
        let changes = try #require(answer.first).changes
        #expect(changes.count == count)
        let failed = changes.filter { $0.status == .failed }
        #expect(failed.map(\.changeId) == [20])
        #expect(failed.first?.failure?.kind == .ruleError)
        #expect(failed.first?.message?.contains("time limit") == true, "\(failed.first?.message ?? "")")
        #expect(changes.filter { $0.status == .resolved }.count == count - 1, "the edits after the runaway were not stopped with it")
        #expect(stored.rows[19]["Quantity"] == 20, "the refused edit did not land")
        #expect(stored.rows[20]["Quantity"] == 22)
    }

    @Test func eachNestedCallHasTheWholeLimitNotTheirSum() throws {
        // Each call runs a third of the limit; together they run many limits in one entry.
        let count = RuleRuntime.stepsWorthOneEntry
        let (answer, _) = try Self.replay(count, rules: """
            function beforeUpdate(row, old) { const end = Date.now() + 40; while (Date.now() < end) {} }
            """, limit: .milliseconds(120))
        let changes = try #require(answer.first).changes
        #expect(changes.count == count)
        #expect(changes.allSatisfy { $0.status == .resolved }, "\(changes.compactMap(\.message).first ?? "")")
    }

    @Test func aShortReplayRunsOneEntryPerCallAndKeepsItsLimit() throws {
        let (answer, _) = try Self.replay(3, rules: """
            function beforeUpdate(row, old) { if (old.Quantity === 2) { while (true) {} } }
            """, limit: .milliseconds(200))
        let changes = try #require(answer.first).changes
        #expect(changes.map(\.status) == [.resolved, .failed, .resolved])
    }
}

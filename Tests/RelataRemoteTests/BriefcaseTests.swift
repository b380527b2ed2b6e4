import Foundation
import Relata
import RelataRemote
import RelataScript
import Testing

/// Offline with a briefcase: tables, pending changes and rules saved, loaded into a new adapter, applied later.
@Suite(.timeLimit(.minutes(10))) struct RemoteBriefcaseTests {
    @Test func pendingChangesAndRulesSurviveABriefcaseAndApplyLater() async throws {
        let server = try PCTradeServer()
        try await server.serve { url in
            let first = demoAdapter(url)
            let clients = try await first.getDataTable("Clients")
            try clients.rows[0].setValue("Saved offline", forKey: "ClientName")
            let bytes = try first.makeBriefcase()
            let file = server.folder.appendingPathComponent("app.briefcase")
            try bytes.save(to: file)

            let later = demoAdapter(url)
            try later.load(Briefcase(contentsOf: file))
            let restored = try #require(later.table(named: "Clients"))
            #expect(restored.rowCount == clients.rowCount)
            #expect(restored.rows[0].rowState == .modified && restored.rows[0]["ClientName"] == "Saved offline")
            #expect(later.rulesVersion == first.rulesVersion)
            #expect(throws: ScriptError.self) { try restored.rows[1].setValue(0.9, forKey: "ClientDiscount") }
            #expect(throws: RelataError.self) { try later.load(Briefcase(contentsOf: file)) }

            let delta = try await later.applyChanges(for: restored)
            #expect(delta.changes.map(\.status) == [.resolved])
            let id = try #require(restored.rows[0]["ClientId"].integerValue)
            #expect(try server.storedRows("Clients", key: "ClientId")[id]?["ClientName"] == "Saved offline")
        }
    }
}

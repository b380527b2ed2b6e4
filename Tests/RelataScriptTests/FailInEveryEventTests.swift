import Foundation
import Relata
import Testing
@testable import RelataScript

/// `fail()` in each event, and the documented effect of each (Documentation/Rules.md).
@Suite struct FailInEveryEventTests {
    func adapter(failingIn event: String, recorder: LogRecorder = LogRecorder()) throws -> LocalDataAdapter {
        let arguments = ["beforeUpdate": "row, old", "beforeProcessDelta": "delta", "afterProcessDelta": "delta",
                         "beforeProcessDeltaChange": "delta, change", "afterProcessDeltaChange": "delta, change",
                         "beforeGetData": "names, requests", "afterGetData": "names, requests"][event] ?? "row"
        return try makeAdapter(orders: "function \(event)(\(arguments)) { fail('no: \(event)'); }", logger: recorder.logger)
    }

    @Test(arguments: ["onNewRow", "beforePost", "beforeInsert"])
    func rowEventsRefuseTheAddition(event: String) throws {
        let adapter = try adapter(failingIn: event)
        let orders = adapter.table(named: "Orders")!
        let error = scriptError { try orders.addNewRow(values: ["ClientId": 1]) }
        #expect(error?.message == "no: \(event)")
        #expect(error?.event == event)
        #expect(error?.line == 1)
        #expect(orders.rowCount == 2)
    }

    @Test(arguments: ["beforePost", "beforeUpdate"])
    func rowEventsRefuseTheChange(event: String) throws {
        let adapter = try adapter(failingIn: event)
        let order = adapter.table(named: "Orders")!.rows[0]
        #expect(scriptError { try order.setValue("x", forKey: "Status") }?.message == "no: \(event)")
        #expect(order.rowState == .unchanged)
    }

    @Test func beforeDeleteRefusesTheRemoval() throws {
        let adapter = try adapter(failingIn: "beforeDelete")
        let orders = adapter.table(named: "Orders")!
        #expect(scriptError { try orders.removeRow(orders.rows[0]) }?.message == "no: beforeDelete")
        #expect(orders.deletedRows.isEmpty)
    }

    @Test(arguments: ["beforeProcessDelta", "beforeProcessDeltaChange", "afterProcessDeltaChange", "afterProcessDelta"])
    func deltaEventsFailTheChanges(event: String) throws {
        let adapter = try adapter(failingIn: event)
        let orders = adapter.table(named: "Orders")!
        try adapter.table(named: "Orders")!.withoutRules { try orders.rows[0].setValue("x", forKey: "Status") }
        let delta = try adapter.applyChanges(for: orders)
        #expect(delta.changes.map(\.status) == [.failed])
        #expect(delta.changes.map(\.message) == ["no: \(event)"])
        #expect(orders.rows[0].rowState == .modified)
        #expect(orders.rows[0].failureMessage == "no: \(event)")
    }

    @Test func beforeCommitRollsBack() throws {
        let adapter = try adapter(failingIn: "beforeCommit")
        let orders = adapter.table(named: "Orders")!
        try orders.rows[0].setValue("x", forKey: "Status")
        let delta = try adapter.applyChanges(for: orders)
        #expect(delta.changes[0].status == .failed)
        #expect(delta.changes[0].message?.contains("no: beforeCommit") == true)
        #expect(orders.rows[0].rowState == .modified)
    }

    @Test(arguments: ["afterCommit", "afterRollback"])
    func afterEventsAreLoggedAndChangeNothing(event: String) throws {
        let recorder = LogRecorder()
        let adapter = try adapter(failingIn: event, recorder: recorder)
        if event == "afterRollback" {
            try adapter.setSchemaScript(RuleScript("function beforeCommit() { fail('roll back') }", fileName: "schema.js"))
        }
        let orders = adapter.table(named: "Orders")!
        try orders.rows[0].setValue("x", forKey: "Status")
        let delta = try adapter.applyChanges(for: orders)
        #expect(delta.changes[0].status == (event == "afterCommit" ? .resolved : .failed))
        #expect(orders.rows[0].rowState == (event == "afterCommit" ? .unchanged : .modified))
        #expect(recorder.messages.contains { $0.contains("\(event) failed") && $0.contains("no: \(event)") })
    }

    @Test(arguments: ["beforeGetData", "afterGetData"])
    func dataEventsRefuseTheRead(event: String) throws {
        let adapter = try adapter(failingIn: event)
        let error = scriptError { _ = try adapter.fetchTable("Orders") }
        #expect(error?.message == "no: \(event)")
        #expect(error?.event == event)
    }
}

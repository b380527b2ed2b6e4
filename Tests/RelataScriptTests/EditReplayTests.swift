import Foundation
import Relata
import Testing
@testable import RelataScript

/// A data server's side: a client's edits replayed onto the stored rows, so the row rules run there too.
@Suite struct EditReplayTests {
    static let detailRules = RuleScript("""
        function beforePost(row) {
            if (row.Quantity <= 0) fail('Quantity must be positive');
        }
        function beforeUpdate(row, old) {
            if (row.UnitPrice < old.UnitPrice && !session.hasRole('Manager')) fail('only a manager lowers a price (' + (isServer ? 'server' : 'client') + ')');
        }
        """, fileName: "OrderDetails.js")
    static let detailsCSV = "DetailId,OrderId,Product,Quantity,UnitPrice\n100,10,Widget,2,9.99\n101,10,Gadget,1,24.50\n102,11,Widget,5,9.99\n"
    static let ordersCSV = "OrderId,ClientId,Status\n10,1,open\n11,2,open\n"

    /// The server's stored tables, their rules, and a processor over them.
    final class Server {
        let orders: DataTable
        let details: DataTable
        let data: TableDataAccess
        let runtime: RuleRuntime

        init() throws {
            orders = try DataTable(name: "Orders", fields: orderFields, csv: EditReplayTests.ordersCSV)
            details = try DataTable(name: "OrderDetails", fields: detailFields, csv: EditReplayTests.detailsCSV)
            try details.addForeignKey("OrderId", references: orders, field: "OrderId")
            data = TableDataAccess(tables: [orders, details])
            runtime = try RuleRuntime(engine: ScriptEngine(timeLimit: .milliseconds(300)))
            try runtime.load(EditReplayTests.detailRules, forTable: "OrderDetails")
        }

        /// Replays and processes deltas as `session`, as a server's UpdateData does.
        func update(_ deltas: [Delta], session: Session = Session()) throws -> [Delta] {
            try runtime.withEnvironment(RuleEnvironment(session: session, isServer: true, dataAccess: data)) {
                let replayed = EditReplay(runtime: runtime).replay(deltas, on: data) { name in
                    guard let table = data.table(named: name) else { throw RelataError(.unknownTable, name) }
                    runtime.attachRules(to: [table])
                    return table
                }
                return replayed.answer(try DeltaProcessor(runtime: runtime, updateOrder: ["Orders", "OrderDetails"])
                    .process(replayed.deltas, store: TableStore(data: data)))
            }
        }
    }

    @Test func aDeltaMadeWithoutRulesIsRefusedByTheServerAsTheClientWouldHave() throws {
        // What a client running the rules hears.
        let honest = try LocalDataAdapter(engine: ScriptEngine(timeLimit: .milliseconds(300)))
        let honestDetails = try honest.addTable(DataTable(name: "OrderDetails", fields: detailFields, csv: Self.detailsCSV), script: Self.detailRules)
        let clientError = try #require(scriptError { try honestDetails.rows[0].setValue(0, forKey: "Quantity") })

        // A client that skipped them.
        let tampered = try DataTable(name: "OrderDetails", fields: detailFields, csv: Self.detailsCSV)
        try tampered.rows[0].setValue(0, forKey: "Quantity")
        try tampered.rows[1].setValue(7, forKey: "Quantity")
        let server = try Server()
        let processed = try server.update([JSONDecoder().decode(Delta.self, from: JSONEncoder().encode(tampered.makeDelta()))])

        let changes = processed[0].changes
        #expect(changes.map(\.changeId) == [1, 2], "the client's change ids come back")
        #expect(changes.map(\.status) == [.failed, .resolved])
        let failure = try #require(changes[0].failure)
        #expect(failure.kind == .refusal)
        #expect(failure.message == clientError.message)
        #expect(failure.location == clientError.location)
        #expect(failure.event == "beforePost")
        #expect(server.details.rows[0]["Quantity"] == 2, "the refused change did not land")
        #expect(server.details.rows[1]["Quantity"] == 7)
        #expect(!server.details.hasChanges)

        try tampered.accept(processed[0])
        #expect(tampered.rows[0].failureMessage == "Quantity must be positive")
        #expect(!tampered.rows[1].isChanged)
    }

    @Test func rulesSeeTheCallersSessionAndIsServer() throws {
        let client = try DataTable(name: "OrderDetails", fields: detailFields, csv: Self.detailsCSV)
        try client.rows[2].setValue(1.5, forKey: "UnitPrice")
        let delta = try client.makeDelta()
        let refused = try Server().update([delta])
        #expect(refused[0].changes[0].message == "only a manager lowers a price (server)")
        let accepted = try Server().update([delta], session: Session(roles: ["Manager"]))
        #expect(accepted[0].changes[0].status == .resolved)
    }

    @Test func newRowsKeepTheClientsTemporaryKeysUntilTheServerGivesRealOnes() throws {
        let orders = try DataTable(name: "Orders", fields: orderFields, csv: Self.ordersCSV)
        let details = try DataTable(name: "OrderDetails", fields: detailFields, csv: Self.detailsCSV)
        try details.addForeignKey("OrderId", references: orders, field: "OrderId")
        try orders.addNewRow(values: ["ClientId": 3])
        try orders.addNewRow(values: ["ClientId": 4])
        let order = orders.rows[3]
        #expect(order["OrderId"] == -2)
        try details.addNewRow(values: ["OrderId": order["OrderId"], "Product": "Bolt", "Quantity": 3, "UnitPrice": 0.5])

        let server = try Server()
        let processed = try server.update([orders.makeDelta(), details.makeDelta()])
        #expect(processed.flatMap(\.changes).allSatisfy { $0.status == .resolved }, "\(processed.flatMap(\.changes).compactMap(\.message))")
        #expect(processed[0].changes.map { $0.refreshedValues["OrderId"] } == [12, 13])
        #expect(server.details.rows[3]["OrderId"] == 13, "the detail follows its order's real key on the server")

        for delta in processed { try (delta.tableName == "Orders" ? orders : details).accept(delta) }
        #expect(order["OrderId"] == 13)
        #expect(details.rows[3]["OrderId"] == 13, "and on the client")
        #expect(details.rows[3]["DetailId"] == 103)
    }

    @Test func aRowChangedOrGoneUnderneathIsAConflict() throws {
        let client = try DataTable(name: "OrderDetails", fields: detailFields, csv: Self.detailsCSV)
        try client.rows[0].setValue(3, forKey: "Quantity")
        try client.rows[1].setValue(4, forKey: "Quantity")
        try client.removeRow(client.rows[2])
        let delta = try client.makeDelta()

        let server = try Server()
        try server.details.withoutRules {
            try server.details.rows[0].setValues(["Quantity": 9, "Product": "Widget XL"])
            try server.details.removeRow(server.details.rows[2])
        }
        try server.details.accept(server.details.makeDelta().resolvingAll())
        let processed = try server.update([delta])
        #expect(processed[0].changes.map(\.failure?.kind) == [.conflict, nil, .conflict])
        #expect(processed[0].changes[0].message == "row (DetailId=100) changed since it was read: Product, Quantity")
        #expect(processed[0].changes[2].message == "the row (DetailId=102) is no longer there")
        #expect(server.details.rows[0]["Quantity"] == 9, "nothing is overwritten silently")
        #expect(server.details.rows[1]["Quantity"] == 4)
    }

    @Test func hostileDeltasFailTheirChangesClearly() throws {
        let server = try Server()
        func one(_ change: DeltaChange) throws -> DeltaChange {
            try server.update([Delta(tableName: "OrderDetails", keyFields: ["DetailId"], loggedFields: ["DetailId", "Quantity"],
                                     changes: [change])])[0].changes[0]
        }
        let unknown = try one(DeltaChange(changeId: 1, type: .update, oldValues: ["DetailId": 100, "Quantity": 2], newValues: ["Quantiy": 5]))
        #expect(unknown.failure?.kind == .invalidValue)
        #expect(unknown.message?.contains("no field 'Quantiy'") == true)
        let wrongType = try one(DeltaChange(changeId: 1, type: .update, oldValues: ["DetailId": 100, "Quantity": 2], newValues: ["Quantity": "many"]))
        #expect(wrongType.failure?.kind == .invalidValue)
        let noKey = try one(DeltaChange(changeId: 1, type: .delete, oldValues: ["Quantity": 2]))
        #expect(noKey.message?.contains("lacks the key field's original value") == true)
        let positiveKey = try one(DeltaChange(changeId: 1, type: .insert, newValues: ["DetailId": 5, "OrderId": 10, "Quantity": 1]))
        #expect(positiveKey.status == .resolved, "a client cannot choose an auto-increment key: the server gives one")
        #expect(positiveKey.refreshedValues["DetailId"] == 103)
        let noOrder = try one(DeltaChange(changeId: 2, type: .insert, newValues: ["Quantity": 1]))
        #expect(noOrder.failure?.kind == .invalidValue, "a required value is missing")
        let twice = try server.update([Delta(tableName: "OrderDetails", keyFields: ["DetailId"], loggedFields: [], changes: [
            DeltaChange(changeId: 4, type: .delete, oldValues: ["DetailId": 100]), DeltaChange(changeId: 4, type: .delete, oldValues: ["DetailId": 101]),
        ])])
        #expect(twice[0].changes.allSatisfy { $0.message?.contains("the delta has change 4 twice") == true }, "\(twice[0].changes.map(\.message))")
        #expect(server.details.rowCount == 4, "only the positive-key insert landed")
    }

    @Test func aDeltaRefusedWholeLeavesTheNextDeltaOfTheRequestItsOwnVerdicts() throws {
        let server = try Server()
        let answer = try server.update([
            Delta(tableName: "Orders", keyFields: ["OrderId"], loggedFields: [], changes: [
                DeltaChange(changeId: 0, type: .update, oldValues: ["OrderId": 10], newValues: ["Status": "shipped"]),
            ]),
            Delta(tableName: "OrderDetails", keyFields: ["DetailId"], loggedFields: [], changes: [
                DeltaChange(changeId: 1, type: .update, oldValues: ["DetailId": 100], newValues: ["Quantity": 3]),
            ]),
        ])
        let orders = try #require(answer.first { $0.tableName == "Orders" })
        #expect(orders.changes.first?.message?.contains("change ids are positive; the delta has 0") == true, "\(orders.changes.map(\.message))")
        let details = try #require(answer.first { $0.tableName == "OrderDetails" })
        #expect(details.changes.first?.status == .resolved, "\(details.changes.map(\.message))")
        #expect(server.details.rows.first { $0["DetailId"] == 100 }?["Quantity"] == 3)
    }

    /// Sequences that rise across the request are checked without a set of them; any other
    /// request is checked again with one, so a sequence used twice is found wherever it is.
    @Test func anEditSequenceUsedTwiceIsFoundWhetherOrNotTheSequencesRise() throws {
        func update(_ id: Int, _ sequences: [Int64]) -> DeltaChange {
            var change = DeltaChange(changeId: id, type: .update, oldValues: ["DetailId": .integer(Int64(99 + id))], newValues: ["Quantity": 3])
            change.edits = sequences.map { RowEdit(sequence: $0, kind: .update, values: ["Quantity": 3]) }
            return change
        }
        func deltas(_ orders: [[Int64]], _ details: [[Int64]]) -> [Delta] {
            [Delta(tableName: "Orders", keyFields: ["OrderId"], loggedFields: [], changes: orders.enumerated().map { update($0 + 1, $1) }),
             Delta(tableName: "OrderDetails", keyFields: ["DetailId"], loggedFields: [], changes: details.enumerated().map { update($0 + 1, $1) })]
        }
        func refusal(_ deltas: [Delta]) -> String? {
            do {
                try EditReplay.checkEdits(of: deltas)
                return nil
            } catch {
                return "\(error)"
            }
        }
        #expect(refusal(deltas([[1], [2, 3]], [[4], [5]])) == nil, "rising across the request")
        #expect(refusal(deltas([[1], [4, 6]], [[2], [3, 5]])) == nil, "interleaved across the tables, each used once")
        let interleaved = try #require(refusal(deltas([[1], [4, 6]], [[2], [3, 6]])))
        #expect(interleaved.contains("OrderDetails") && interleaved.contains("change 2: edit sequence 6 is used twice"), "\(interleaved)")
        let afterARisingRun = try #require(refusal(deltas([[1], [2], [3], [4]], [[5], [6], [7], [3]])))
        #expect(afterARisingRun.contains("OrderDetails") && afterARisingRun.contains("change 4: edit sequence 3 is used twice"), "\(afterARisingRun)")
        let withinAChange = try #require(refusal(deltas([[1, 1]], [])))
        #expect(withinAChange.contains("change 1: edit sequence 1 is used twice"), "\(withinAChange)")
        let notPositive = try #require(refusal(deltas([[2], [0]], [])))
        #expect(notPositive.contains("change 2: an edit's sequence is a positive number, not 0"), "\(notPositive)")
    }
}

extension Delta {
    /// Every change resolved, as a data source that accepted them all answers.
    func resolvingAll() -> Delta {
        var delta = self
        for index in delta.changes.indices { delta.changes[index].resolve() }
        return delta
    }
}

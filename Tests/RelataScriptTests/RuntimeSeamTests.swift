import Foundation
import Relata
import Testing
@testable import RelataScript

/// The rule runtime's seams: the delta processor over any store, failures that
/// travel with their change, environments per unit of work, `lda` over any data.
@Suite struct RuntimeSeamTests {
    /// A store that records what the processor asks of it and can fail on purpose.
    final class ScriptedStore: DeltaStore {
        enum Failure: Error, CustomStringConvertible {
            case diskFull
            var description: String { "disk full" }
        }
        var calls: [String] = []
        var throwWhileStoring = false
        var refuseChange: Int?
        var throwOnCommit = false

        func begin(_ deltas: [Delta]) throws { calls.append("begin \(deltas.map(\.tableName))") }
        func changesMadeByRules() throws -> [Delta] { [] }
        func store(_ deltas: inout [Delta]) throws {
            for d in deltas.indices {
                for c in deltas[d].changes.indices where deltas[d].changes[c].status == .resolved {
                    let id = deltas[d].changes[c].changeId
                    if id == refuseChange {
                        deltas[d].changes[c].fail("row \(id) was changed by someone else", kind: .storeError)
                        continue
                    }
                    calls.append("store \(deltas[d].tableName) \(id)")
                    if deltas[d].changes[c].type == .insert { deltas[d].changes[c].refreshedValues["OrderId"] = .integer(500 + Int64(id)) }
                    if throwWhileStoring && id == 2 { throw Failure.diskFull }
                }
            }
        }
        func commit(_ deltas: [Delta]) throws {
            calls.append("commit")
            if throwOnCommit { throw Failure.diskFull }
        }
        func rollback(_ deltas: [Delta]) { calls.append("rollback") }
        func discard(_ deltas: [Delta]) { calls.append("discard") }
    }

    /// Three pending order changes (update 1, insert 2, update 3) and a runtime tracing transaction events.
    func orderDelta() throws -> (Delta, RuleRuntime) {
        let orders = try DataTable(name: "Orders", fields: orderFields, csv: "OrderId,ClientId,Status\n10,1,open\n11,2,open\n")
        try orders.rows[0].setValue("paid", forKey: "Status")
        try orders.addNewRow(values: ["ClientId": 2])
        try orders.rows[1].setValue("late", forKey: "Status")
        let runtime = try RuleRuntime(engine: ScriptEngine(timeLimit: .milliseconds(300)))
        try runtime.loadSchemaScript(RuleScript(ApplyChangesTests.tracer, fileName: "schema.js"))
        return (try orders.makeDelta(), runtime)
    }

    func trace(_ runtime: RuleRuntime) throws -> [String] {
        let context = runtime.schemaScript!.context
        return try context.value(from: context.call(context.globalFunction(named: "read"), [])).stringValue?
            .split(separator: "\n").map(String.init) ?? []
    }

    @Test func aStoreThatFailsMidApplyRollsEverythingBack() throws {
        let (delta, runtime) = try orderDelta()
        let store = ScriptedStore()
        store.throwWhileStoring = true
        let processed = try DeltaProcessor(runtime: runtime).process([delta], store: store)
        #expect(store.calls == ["begin [\"Orders\"]", "store Orders 1", "store Orders 2", "rollback"])
        #expect(processed[0].changes.allSatisfy { $0.status == .failed })
        #expect(processed[0].changes.allSatisfy { $0.failure?.kind == .storeError })
        #expect(processed[0].changes.allSatisfy { $0.refreshedValues.isEmpty }, "keys assigned before the failure are void")
        #expect(processed[0].changes[0].message == "not applied: the apply was rolled back (the store failed: disk full)")
        #expect(try trace(runtime).suffix(1) == ["afterRollback"])
        #expect(!(try trace(runtime)).contains("beforeCommit"))
    }

    @Test func aCommitThatFailsRollsBack() throws {
        let (delta, runtime) = try orderDelta()
        let store = ScriptedStore()
        store.throwOnCommit = true
        let processed = try DeltaProcessor(runtime: runtime).process([delta], store: store)
        #expect(store.calls.suffix(2) == ["commit", "rollback"])
        #expect(processed[0].changes.allSatisfy { $0.status == .failed && $0.failure?.kind == .storeError })
        #expect(try trace(runtime).suffix(2) == ["beforeCommit", "afterRollback"])
    }

    @Test func aChangeTheStoreRefusesFailsAloneOrRollsBackByTheUpdateRule() throws {
        let (delta, runtime) = try orderDelta()
        let store = ScriptedStore()
        store.refuseChange = 3
        let processed = try DeltaProcessor(runtime: runtime).process([delta], store: store)
        #expect(processed[0].changes.map(\.status) == [.resolved, .resolved, .failed])
        #expect(processed[0].changes[1].refreshedValues == ["OrderId": 502])
        #expect(processed[0].changes[2].failure == ChangeFailure(.storeError, "row 3 was changed by someone else"))
        #expect(store.calls.last == "commit")

        let strict = ScriptedStore()
        strict.refuseChange = 3
        let rolledBack = try DeltaProcessor(runtime: runtime, updateRules: ["orders": UpdateRule(onFailure: .rollbackAll)])
            .process([delta], store: strict)
        #expect(rolledBack[0].changes.allSatisfy { $0.status == .failed })
        #expect(rolledBack[0].changes[0].message == "not applied: the apply was rolled back (change 3 of Orders failed: row 3 was changed by someone else)")
        #expect(strict.calls.last == "rollback")
    }

    @Test func validatingRunsTheUnitUpToTheCommitAndDiscardsIt() throws {
        let (delta, runtime) = try orderDelta()
        let store = ScriptedStore()
        store.refuseChange = 3
        let verdicts = try DeltaProcessor(runtime: runtime).validate([delta], store: store)
        #expect(verdicts[0].changes.map(\.status) == [.resolved, .resolved, .failed])
        #expect(verdicts[0].changes[2].message == "row 3 was changed by someone else")
        #expect(verdicts[0].changes.allSatisfy { $0.refreshedValues.isEmpty }, "only the data source that stores a change refreshes it")
        #expect(store.calls.last == "discard")
        #expect(!store.calls.contains("commit") && !store.calls.contains("rollback"))
        let events = try trace(runtime)
        #expect(events.last == "beforeCommit")
        #expect(!events.contains("afterCommit") && !events.contains("afterRollback"))

        let strict = ScriptedStore()
        strict.refuseChange = 3
        let rolledBack = try DeltaProcessor(runtime: runtime, updateRules: ["orders": UpdateRule(onFailure: .rollbackAll)])
            .validate([delta], store: strict)
        #expect(rolledBack[0].changes.allSatisfy { $0.status == .failed }, "a unit that would roll back fails every change")
        #expect(strict.calls.last == "discard")
    }

    @Test func structuredFailuresSurviveACodableRoundTrip() throws {
        let adapter = try makeAdapter(details: """
            function beforeProcessDeltaChange(delta, change) {
                if (change.newValues.Quantity > 10)
                    fail('at most 10 per line');
            }
            function afterProcessDeltaChange(delta, change) {
                if (change.newValues.Quantity === 7) null.boom;
            }
            """)
        let details = adapter.table(named: "OrderDetails")!
        try details.rows[0].setValue(50, forKey: "Quantity")
        try details.rows[1].setValue(7, forKey: "Quantity")
        let deltas = try adapter.applyChanges(for: [details])
        let refusal = try #require(deltas[0].changes[0].failure)
        #expect(refusal.kind == .refusal)
        #expect(refusal.message == "at most 10 per line")
        #expect(refusal.event == "beforeProcessDeltaChange")
        #expect(refusal.table == "OrderDetails")
        #expect(refusal.location == "OrderDetails.js:3:9")
        let broken = try #require(deltas[0].changes[1].failure)
        #expect(broken.kind == .ruleError)
        #expect(broken.event == "afterProcessDeltaChange")
        #expect(broken.line == 6)
        #expect(deltas[0].changes[1].message == broken.description, "a broken rule's message says where")

        let wire = try JSONDecoder().decode([Delta].self, from: JSONEncoder().encode(deltas))
        #expect(wire == deltas)
        let thrown = try #require(ScriptError(firstFailureIn: wire))
        #expect(thrown.kind == .ruleFailed)
        #expect(thrown.location == "OrderDetails.js:3:9")
        #expect(thrown.event == "beforeProcessDeltaChange")
    }

    @Test func aDeltaWithoutFailuresDecodesFromOlderJSON() throws {
        let json = #"{"tableName":"T","keyFields":["Id"],"loggedFields":["Id"],"changes":[{"changeId":1,"type":"delete","oldValues":{"Id":{"integer":1}},"newValues":{},"status":"failed","message":"no","refreshedValues":{}}]}"#
        let delta = try JSONDecoder().decode(Delta.self, from: Data(json.utf8))
        #expect(delta.changes[0].failure == nil)
        #expect(delta.changes[0].message == "no")
    }

    @Test func eachUnitOfWorkSeesItsOwnSession() throws {
        let runtime = try RuleRuntime(engine: ScriptEngine(timeLimit: .milliseconds(300)))
        try runtime.load(RuleScript("""
            function beforeProcessDeltaChange(delta, change) {
                if (!session.hasRole('Sales')) fail((session.User || 'nobody') + ' may not change orders' + (isServer ? ' (server)' : ''));
            }
            """, fileName: "Orders.js"), forTable: "Orders")
        let (delta, _) = try orderDelta()
        let processor = DeltaProcessor(runtime: runtime)
        let clerk = RuleEnvironment(session: Session(values: ["User": "ann"], roles: ["Clerk"]), isServer: true)
        let seller = RuleEnvironment(session: Session(values: ["User": "bob"], roles: ["Sales"]), isServer: true)
        let refused = try runtime.withEnvironment(clerk) { try processor.process([delta], store: ScriptedStore()) }
        let accepted = try runtime.withEnvironment(seller) { try processor.process([delta], store: ScriptedStore()) }
        #expect(refused[0].changes.allSatisfy { $0.message == "ann may not change orders (server)" })
        #expect(accepted[0].changes.allSatisfy { $0.status == .resolved })
        #expect(runtime.environment.session == Session(), "the environment is the unit's, not the runtime's")
    }

    /// A data server's pooled runtime keeps the last unit's session installed between units:
    /// every unit must still see its own session, tables and data, whoever ran before it.
    @Test func unitsOnAPooledRuntimeEachSeeTheirOwnSessionAndData() throws {
        let runtime = try RuleRuntime(engine: ScriptEngine(timeLimit: .milliseconds(300)))
        try runtime.load(RuleScript("""
            function beforeProcessDeltaChange(delta, change) {
                if (!session.hasRole('Sales')) fail((session.User || 'nobody') + ' may not change orders, roles ' + session.roles.join());
                if (lda.select('products', 'P1') === null) fail('no P1 among ' + schema.tables.join());
            }
            """, fileName: "Orders.js"), forTable: "Orders")
        let (delta, _) = try orderDelta()
        let processor = DeltaProcessor(runtime: runtime)
        let ann = Session(values: ["User": "ann"], roles: ["Clerk"]), bob = Session(values: ["User": "bob"], roles: ["Sales"])
        for (session, expected) in [(ann, "ann may not change orders, roles Clerk"), (bob, nil), (bob, nil), (Session(), "nobody may not change orders, roles "),
                                    (ann, "ann may not change orders, roles Clerk"), (bob, nil)] {
            let processed = try runtime.withUnitEnvironment(RuleEnvironment(session: session, isServer: true, dataAccess: Catalogue())) {
                try processor.process([delta], store: ScriptedStore())
            }
            #expect(processed[0].changes.map(\.message) == Array(repeating: expected, count: delta.changes.count), "\(session)")
            #expect(runtime.environment.dataAccess == nil, "the unit's data goes with it")
            #expect(runtime.environment.session == session)
        }
        // Bob's session stays installed, his data does not.
        let noData = try processor.process([delta], store: ScriptedStore())
        #expect(noData[0].changes[0].message?.contains("lda.select: these rules run without data") == true)
    }

    /// `lda` over data that is not a LocalDataAdapter's: a catalogue that makes rows on demand.
    final class Catalogue: RuleDataAccess {
        let products = try! DataTable(name: "Products", fields: [
            FieldDefinition("Code", .string, size: 10, primaryKey: true), FieldDefinition("Price", .currency),
        ], csv: "Code,Price\n")
        var lookups: [String] = []
        var tableNames: [String] { ["Products"] }
        func fields(ofTable name: String) -> [FieldDefinition]? { name.lowercased() == "products" ? products.fields : nil }
        func row(in table: String, key: [Value]) throws -> DataTableRow? {
            lookups.append(key.map(\.description).joined())
            guard let code = key.first?.stringValue, code.hasPrefix("P") else { return nil }
            if let row = try products.row(forPrimaryKey: key) { return row }
            try products.loadRows(named: [["Code": .string(code), "Price": .decimal(12.5)]])
            return try products.row(forPrimaryKey: key)
        }
        func rows(in table: String, where expression: String, parameters: [String: Value]) throws -> [DataTableRow] { [] }
        func insert(into table: String, values: [String: Value]) throws -> DataTableRow { throw RelataError(.readOnlyField, "read-only catalogue") }
        func update(_ row: DataTableRow, values: [String: Value]) throws { throw RelataError(.readOnlyField, "read-only catalogue") }
        func remove(_ row: DataTableRow) throws { throw RelataError(.readOnlyField, "read-only catalogue") }
    }

    @Test func ldaReadsAnyDataAccess() throws {
        let runtime = try RuleRuntime(engine: ScriptEngine(timeLimit: .milliseconds(300)))
        try runtime.load(RuleScript("""
            function beforeProcessDeltaChange(delta, change) {
                const product = lda.select('products', change.Status);
                if (product === null) fail('no product ' + change.Status + ' among ' + schema.tables.join());
                if (product.Price > 10) fail(product.Code + ' costs ' + product.Price);
            }
            """, fileName: "Orders.js"), forTable: "Orders")
        let (delta, _) = try orderDelta()
        let catalogue = Catalogue()
        let processed = try runtime.withEnvironment(RuleEnvironment(dataAccess: catalogue)) {
            try DeltaProcessor(runtime: runtime).process([delta], store: ScriptedStore())
        }
        #expect(processed[0].changes.map(\.message) == ["no product paid among Products", "no product null among Products", "no product late among Products"])
        #expect(catalogue.lookups.count == 3)
        let noData = try DeltaProcessor(runtime: runtime).process([delta], store: ScriptedStore())
        #expect(noData[0].changes[0].message?.contains("lda.select: these rules run without data") == true)
    }

    /// A rule that reads a field whose changes are not written (`logChanges: false`) decides the
    /// same on the client and on a site that only has the delta (the server's side of the wire).
    @Test func rulesReadTheSameFieldsOnBothSidesOfTheWire() throws {
        let fields = [
            FieldDefinition("Id", .integer, primaryKey: true),
            FieldDefinition("Amount", .currency),
            FieldDefinition("Approver", .string, size: 20, logChanges: false),
        ]
        let rules = RuleScript("""
            function beforeProcessDeltaChange(delta, change) {
                if (change.Amount > 1000 && change.Approver !== 'boss') fail('over 1000 needs the boss, not ' + change.Approver);
            }
            """, fileName: "Payments.js")
        let adapter = try LocalDataAdapter(engine: ScriptEngine(timeLimit: .milliseconds(300)))
        let payments = try adapter.addTable(DataTable(name: "Payments", fields: fields, csv: "Id,Amount,Approver\n1,10,clerk\n2,10,clerk\n"),
                                            script: rules)
        try payments.rows[0].setValues(["Amount": 5000, "Approver": "boss"])
        try payments.rows[1].setValues(["Amount": 5000, "Approver": "intern"])
        let sent = try payments.makeDelta()
        let wire = try JSONDecoder().decode(Delta.self, from: JSONEncoder().encode(sent))
        #expect(wire.changes.map { $0.newValues["Approver"] } == ["boss", "intern"], "the unwritten field travels")
        #expect(!wire.loggedFields.contains("Approver"))

        let server = try RuleRuntime(engine: ScriptEngine(timeLimit: .milliseconds(300)))
        try server.load(rules, forTable: "Payments")
        let serverVerdict = try server.withEnvironment(RuleEnvironment(isServer: true)) {
            try DeltaProcessor(runtime: server).process([wire], store: ScriptedStore())
        }
        let clientVerdict = try adapter.applyChanges(for: payments)
        #expect(clientVerdict.changes.map(\.status) == [.resolved, .failed])
        #expect(serverVerdict[0].changes.map(\.status) == clientVerdict.changes.map(\.status))
        #expect(serverVerdict[0].changes.map(\.failure) == clientVerdict.changes.map(\.failure))
        #expect(clientVerdict.changes[1].message == "over 1000 needs the boss, not intern")
    }
}

/// Sites built from the logical schema rather than from files.
@Suite struct SchemaDefinitionSiteTests {
    static let schema = try! SchemaDefinition(name: "Shop", tables: [
        TableDefinition(name: "Clients", fields: clientFields),
        TableDefinition(name: "Orders", fields: orderFields, script: RuleScript("""
            function beforeProcessDeltaChange(delta, change) {
                if (change.isInsert && lda.select('Clients', change.ClientId) === null) fail('no client ' + change.ClientId);
            }
            """, fileName: "Orders.js"), updateRule: UpdateRule(onFailure: .rollbackAll),
            foreignKeys: [ForeignKeyDefinition(field: "ClientId", references: "Clients", referencedField: "ClientId")],
            lookupFields: [LookupFieldDefinition(name: "ClientName", sourceField: "ClientId", lookupTable: "Clients",
                                                 lookupKeyField: "ClientId", lookupResultField: "Name")],
            calculatedFields: [CalculatedFieldDefinition(name: "Label", type: .string, function: "function (row) { return row.Status + '!' }")]),
    ], updateOrder: ["Clients", "Orders"])

    @Test func aLocalDataAdapterIsBuiltFromTheSchemaAndItsData() throws {
        let clients = try DataTable(name: "Clients", fields: clientFields, csv: "ClientId,Name,CreditLimit\n1,Acme,1000\n")
        let adapter = try LocalDataAdapter(schema: Self.schema, tables: [clients], engine: ScriptEngine(timeLimit: .milliseconds(300)))
        let orders = try #require(adapter.table(named: "Orders"))
        #expect(orders.rows.isEmpty, "a table without data starts empty")
        #expect(adapter.updateRule(forTable: "Orders").onFailure == .rollbackAll)
        #expect(adapter.updateOrder == ["Clients", "Orders"])
        let row = try orders.addNewRow(values: ["ClientId": 1, "Status": "open"])
        #expect(try row.value(forKey: "ClientName") == "Acme")
        #expect(try row.value(forKey: "Label") == "open!")
        try orders.addNewRow(values: ["ClientId": 9])
        let delta = try adapter.applyChanges(for: orders)
        #expect(delta.changes.map(\.status) == [.failed, .failed], "rollbackAll: one refusal fails both")
        #expect(delta.changes[1].message == "no client 9")
    }

    @Test func tablesThatDoNotMatchTheSchemaAreRefused() throws {
        let wrong = try DataTable(name: "Clients", fields: [FieldDefinition("ClientId", .integer, primaryKey: true)])
        #expect(throws: RelataError.self) { try LocalDataAdapter(schema: Self.schema, tables: [wrong]) }
        let stranger = try DataTable(name: "Invoices", fields: [FieldDefinition("Id", .integer)])
        #expect(throws: RelataError.self) { try LocalDataAdapter(schema: Self.schema, tables: [stranger]) }
    }

    @Test func aPoolOfRuntimesLoadsTheSchemasScripts() async throws {
        let pool = try RuleRuntimePool(size: 2) {
            let runtime = try RuleRuntime(engine: ScriptEngine(timeLimit: .milliseconds(300)))
            try runtime.load(Self.schema)
            return runtime
        }
        let handles = try await pool.perform { $0.handles(.beforeProcessDeltaChange, forTable: "orders") }
        #expect(handles)
    }
}

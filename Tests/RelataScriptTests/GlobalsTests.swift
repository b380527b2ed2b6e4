import Foundation
import Relata
import Testing
@testable import RelataScript

/// `fail`, `log`, `newGuid`, `isServer`, `session`, `schema` and `lda`.
@Suite struct GlobalsTests {
    /// Runs `body` as the Orders script's beforePost and returns what it stores in `result`.
    func run(_ body: String, configure: (LocalDataAdapter) -> Void = { _ in }) throws -> Value {
        let adapter = try makeAdapter(orders: "var result = null;\nfunction beforePost(row) {\n\(body)\n}\nfunction read() { return result; }")
        configure(adapter)
        try adapter.table(named: "Orders")!.rows[0].setValue("go", forKey: "Status")
        let context = adapter.host.script(forTable: "Orders")!.context
        return try context.value(from: context.call(context.globalFunction(named: "read"), []))
    }

    @Test func logWritesToSwiftLogWithTheScriptLocation() throws {
        let recorder = LogRecorder()
        let adapter = try makeAdapter(orders: "function beforePost(row) {\n  log('order', row.OrderId, {status: row.Status});\n}",
                                      logger: recorder.logger)
        try adapter.table(named: "Orders")!.rows[0].setValue("paid", forKey: "Status")
        #expect(recorder.messages == [#"order 10 {"status":"paid"}"#])
        #expect(recorder.metadata.first?["script"] == "Orders.js:2:6")
        #expect(recorder.metadata.first?["table"] == "Orders")
    }

    @Test func newGuidGivesAGuid() throws {
        let value = try run("result = newGuid() + ' ' + newGuid();")
        let parts = value.stringValue?.split(separator: " ") ?? []
        #expect(parts.count == 2)
        #expect(parts.allSatisfy { UUID(uuidString: String($0)) != nil })
        #expect(parts.first != parts.last)
    }

    @Test func isServerAndSession() throws {
        #expect(try run("result = isServer;") == false)
        #expect(try run("result = isServer;", configure: { $0.isServer = true }) == true)
        let session = try run("result = session.UserName + ':' + session.roles.join('/') + ':' + session.hasRole('Sales') + ':' + session.hasRole('Admin');",
                              configure: { $0.session = Session(values: ["UserName": "ada"], roles: ["Sales", "Support"]) })
        #expect(session == "ada:Sales/Support:true:false")
    }

    @Test func schemaDescribesTheTables() throws {
        let value = try run("result = schema.tables.join(',') + ' ' + schema.Orders.fields.map(f => f.name + ':' + f.type + (f.primaryKey ? '*' : '')).join(',');")
        #expect(value == "Clients,Orders,OrderDetails OrderId:autoInc*,ClientId:integer,Status:string")
    }

    @Test func failWithoutAMessage() throws {
        let adapter = try makeAdapter(orders: "function beforePost(row) { fail(); }")
        let error = scriptError { try adapter.table(named: "Orders")!.rows[0].setValue("x", forKey: "Status") }
        #expect(error?.message == "the rule failed")
        #expect(error?.kind == .ruleFailed)
    }

    @Test func ldaReadsOtherTables() throws {
        let adapter = try makeAdapter(details: """
            function beforePost(row) {
                const order = lda.select('Orders', row.OrderId);
                const client = lda.select('Clients', order.ClientId);
                const lines = lda.selectWhere('OrderDetails', 'OrderId = :id AND DetailId <> :me', { id: row.OrderId, me: row.DetailId });
                let total = row.Quantity * row.UnitPrice;
                for (const line of lines) total += line.Quantity * line.UnitPrice;
                if (total > client.CreditLimit) fail('order ' + order.OrderId + ' totals ' + total.toFixed(2) + ', over the credit limit of ' + client.Name);
                if (lda.select('Orders', 999) !== null) fail('expected null');
            }
            """)
        let details = adapter.table(named: "OrderDetails")!
        try details.rows[0].setValue(3, forKey: "Quantity")
        let error = scriptError { try details.rows[2].setValue(6, forKey: "Quantity") }
        #expect(error?.message == "order 11 totals 59.94, over the credit limit of Globex")
    }

    @Test func ldaWritesGoThroughTheTargetsRules() throws {
        let adapter = try makeAdapter(orders: """
            function beforeUpdate(row, old) {
                if (row.Status === 'cancelled') {
                    for (const line of lda.selectWhere('OrderDetails', 'OrderId = :id', { id: row.OrderId })) lda.remove('OrderDetails', line);
                    lda.insert('Clients', { ClientId: 3, Name: 'Audit for ' + row.OrderId });
                    lda.update('Clients', row.ClientId, { CreditLimit: 0 });
                }
            }
            """, clients: "function beforeInsert(row) { if (row.Name.length > 20) fail('name too long'); }")
        let order = adapter.table(named: "Orders")!.rows[0]
        try order.setValue("cancelled", forKey: "Status")
        #expect(adapter.table(named: "OrderDetails")!.deletedRows.count == 2)
        #expect(try adapter.table(named: "Clients")!.row(forPrimaryKey: 3)?["Name"] == "Audit for 10")
        #expect(try adapter.table(named: "Clients")!.row(forPrimaryKey: 1)?["CreditLimit"] == .decimal(0))
    }

    @Test func ldaErrorsAreClear() throws {
        #expect(scriptError { _ = try run("lda.select('Nope', 1)") }?.message.contains("there is no table 'Nope' (tables: Clients, Orders, OrderDetails)") == true)
        #expect(scriptError { _ = try run("lda.update('Clients', 42, { Name: 'x' })") }?.message.contains("no row with key 42") == true)
        #expect(scriptError { _ = try run("lda.insert('Clients', { ClientId: 9, Nmae: 'x' })") }?.message.contains("no field 'Nmae'") == true)
        #expect(scriptError { _ = try run("lda.selectWhere('Clients', 'Name = ')") }?.message.contains("column") == true)
    }
}

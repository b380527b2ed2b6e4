import Foundation
import Relata
import RelataScript
import RelataServer
import RelataServerTestSupport
import RelataTestSupport
import Testing

/// The server's data service over a real SQLite file: the same rules, authoritative.
@Suite(.timeLimit(.minutes(10))) struct DataServiceTests {
    static let detailRules = RuleScript("""
        function beforePost(row) {
            if (row.Quantity <= 0) fail('Quantity must be positive');
        }
        function afterProcessDeltaChange(delta, change) {
            if (change.isInsert) lda.insert('AuditLog', { Message: 'new line for order ' + change.OrderId + (isServer ? ' on the server' : '') });
        }
        """, fileName: "OrderDetails.js")
    static let orderRules = RuleScript("""
        function beforeProcessDeltaChange(delta, change) {
            if (!change.isDelete && lda.select('Clients', change.ClientId) === null) fail('no client ' + change.ClientId);
        }
        """, fileName: "Orders.js")

    static func schema(orderUpdateRule: UpdateRule = UpdateRule()) throws -> SchemaDefinition {
        try SchemaDefinition(name: "Shop", tables: [
            TableDefinition(name: "Clients", fields: clientFields),
            TableDefinition(name: "Orders", fields: orderFields, script: orderRules, updateRule: orderUpdateRule,
                            foreignKeys: [ForeignKeyDefinition(field: "ClientId", references: "Clients", referencedField: "ClientId")]),
            TableDefinition(name: "OrderDetails", fields: detailFields, script: detailRules,
                            foreignKeys: [ForeignKeyDefinition(field: "OrderId", references: "Orders", referencedField: "OrderId")]),
            TableDefinition(name: "AuditLog", fields: [FieldDefinition("LogId", .autoInc, primaryKey: true), FieldDefinition("Message", .string, size: 200)]),
        ], updateOrder: ["Clients", "Orders", "OrderDetails", "AuditLog"])
    }

    static let clientsCSV = "ClientId,Name,CreditLimit\n1,Acme,1000\n2,Globex,50\n"
    static let ordersCSV = "OrderId,ClientId,Status\n10,1,open\n11,2,open\n"
    static let detailsCSV = "DetailId,OrderId,Product,Quantity,UnitPrice\n100,10,Widget,2,9.99\n101,10,Gadget,1,24.50\n102,11,Widget,5,9.99\n"

    /// The client's copies of the tables, as fetched.
    static func clientTables() throws -> (clients: DataTable, orders: DataTable, details: DataTable) {
        let clients = try DataTable(name: "Clients", fields: clientFields, csv: clientsCSV)
        let orders = try DataTable(name: "Orders", fields: orderFields, csv: ordersCSV)
        let details = try DataTable(name: "OrderDetails", fields: detailFields, csv: detailsCSV)
        try orders.addForeignKey("ClientId", references: clients, field: "ClientId")
        try details.addForeignKey("OrderId", references: orders, field: "OrderId")
        return (clients, orders, details)
    }

    /// A database seeded with the example data (a SQLite file, or a PostgreSQL database of its
    /// own), removed when the value goes.
    final class Database {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("relata-server-\(UUID().uuidString)")
        let database: any SQLDatabase
        let service: DataService
        private let cleanup: @Sendable () -> Void

        init(schema: SchemaDefinition? = nil, backend: StorageBackend = .sqlite, readers: Int = 4) throws {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            (database, cleanup) = try backend.makeDatabase(in: folder, readers: readers)
            let storage = try SQLStorage(database: database, schema: schema ?? DataServiceTests.schema())
            let (clients, orders, details) = try DataServiceTests.clientTables()
            #expect(try storage.seedIfEmpty(with: [clients, orders, details]))
            service = try DataService(storage: storage, runtimes: 2, timeLimit: .milliseconds(500))
        }

        deinit {
            cleanup()
            try? FileManager.default.removeItem(at: folder)
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func theDatabaseIsSeededOnceAndReused(backend: StorageBackend) throws {
        let database = try Database(backend: backend)
        let again = try SQLStorage(database: database.database, schema: Self.schema())
        #expect(try !again.seedIfEmpty(with: [DataTable(name: "Clients", fields: clientFields, csv: "ClientId,Name,CreditLimit\n9,X,1\n")]))
        #expect(try database.service.storedRows(of: "Clients").count == 2)
        #expect(try database.service.storedRows(of: "OrderDetails").first?["UnitPrice"] == .decimal(Decimal(string: "9.99")!))
    }

    @Test(arguments: StorageBackend.allCases)
    func aTamperedDeltaIsRefusedOnTheServerWithTheClientsOwnMessage(backend: StorageBackend) async throws {
        let database = try Database(backend: backend)
        let (_, _, details) = try Self.clientTables()   // no rules: a client that skipped them
        try details.rows[0].setValue(0, forKey: "Quantity")
        try details.rows[1].setValue(3, forKey: "Quantity")
        let processed = try await database.service.updateData([details.makeDelta()], session: Session())
        #expect(processed[0].changes.map(\.status) == [.failed, .resolved])
        let failure = try #require(processed[0].changes[0].failure)
        #expect(failure.kind == .refusal)
        #expect(failure.message == "Quantity must be positive")
        #expect(failure.location == "OrderDetails.js:2:28")
        let stored = try database.service.storedRows(of: "OrderDetails")
        #expect(stored.map { $0["Quantity"] } == [2, 3, 5], "the refused change did not land, the other did")
    }

    @Test(arguments: StorageBackend.allCases)
    func newRowsGetRealKeysAndTheirDetailsFollow(backend: StorageBackend) async throws {
        let database = try Database(backend: backend)
        let (_, orders, details) = try Self.clientTables()
        let order = try orders.addNewRow(values: ["ClientId": 2, "Status": "new"])
        try details.addNewRow(values: ["OrderId": order["OrderId"], "Product": "Bolt", "Quantity": 4, "UnitPrice": 0.25])
        let processed = try await database.service.updateData([orders.makeDelta(), details.makeDelta()], session: Session())
        let changes = processed.flatMap(\.changes)
        #expect(changes.allSatisfy { $0.status == .resolved }, "\(changes.compactMap(\.message))")
        #expect(processed[0].changes[0].refreshedValues["OrderId"] == 12)
        #expect(processed[1].changes[0].refreshedValues["OrderId"] == 12, "the detail's reference to its new order is real too")
        for delta in processed where delta.tableName != "AuditLog" {
            try (delta.tableName == "Orders" ? orders : details).accept(delta)
        }
        #expect(order["OrderId"] == 12)
        #expect(details.rows.last?["OrderId"] == 12)
        #expect(try database.service.storedRows(of: "OrderDetails").last?["OrderId"] == 12)
        #expect(try database.service.storedRows(of: "AuditLog").map { $0["Message"] } == ["new line for order -1 on the server"],
                "a rule's lda.insert joined the same transaction")
    }

    @Test(arguments: StorageBackend.allCases)
    func serverRulesReadTheDatabaseThroughLda(backend: StorageBackend) async throws {
        let database = try Database(backend: backend)
        let (_, orders, _) = try Self.clientTables()
        try orders.rows[0].setValue(2, forKey: "ClientId")
        try orders.addNewRow(values: ["ClientId": 77])
        let processed = try await database.service.updateData([orders.makeDelta()], session: Session())
        #expect(processed[0].changes.map(\.status) == [.resolved, .failed])
        #expect(processed[0].changes[1].message == "no client 77")
    }

    @Test(arguments: StorageBackend.allCases)
    func aChangeToARowChangedUnderneathIsAConflictAndLosesNothing(backend: StorageBackend) async throws {
        let database = try Database(backend: backend)
        let (_, _, first) = try Self.clientTables()
        let (_, _, second) = try Self.clientTables()
        try first.rows[2].setValue(6, forKey: "Quantity")
        try second.rows[2].setValue(7, forKey: "Quantity")
        let won = try await database.service.updateData([first.makeDelta()], session: Session())
        let lost = try await database.service.updateData([second.makeDelta()], session: Session())
        #expect(won[0].changes[0].status == .resolved)
        #expect(lost[0].changes[0].failure?.kind == .conflict)
        #expect(lost[0].changes[0].message == "row (DetailId=102) changed since it was read: Quantity")
        #expect(try database.service.storedRows(of: "OrderDetails")[2]["Quantity"] == 6)
    }

    @Test(arguments: StorageBackend.allCases)
    func concurrentConflictingUpdatesHaveExactlyOneWinner(backend: StorageBackend) async throws {
        let database = try Database(backend: backend)
        let service = database.service
        let outcomes = try await withThrowingTaskGroup(of: DeltaChange.Status.self) { group in
            for quantity in 10..<20 {
                group.addTask {
                    let (_, _, details) = try Self.clientTables()
                    try details.rows[0].setValue(.integer(Int64(quantity)), forKey: "Quantity")
                    return try await service.updateData([details.makeDelta()], session: Session())[0].changes[0].status
                }
            }
            return try await group.reduce(into: [DeltaChange.Status]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 == .resolved }.count == 1)
        #expect(outcomes.filter { $0 == .failed }.count == 9)
    }

    @Test(arguments: StorageBackend.allCases)
    func rollbackAllStoresNothingWhenOneChangeFails(backend: StorageBackend) async throws {
        let database = try Database(schema: Self.schema(orderUpdateRule: UpdateRule(onFailure: .rollbackAll)), backend: backend)
        let (_, orders, _) = try Self.clientTables()
        try orders.rows[0].setValue("paid", forKey: "Status")
        try orders.addNewRow(values: ["ClientId": 77])
        let processed = try await database.service.updateData([orders.makeDelta()], session: Session())
        #expect(processed[0].changes.allSatisfy { $0.status == .failed })
        #expect(processed[0].changes[0].refreshedValues.isEmpty)
        #expect(try database.service.storedRows(of: "Orders").map { $0["Status"] } == ["open", "open"])
    }

    @Test(arguments: StorageBackend.allCases)
    func anUnpublishedTableIsRefusedWhole(backend: StorageBackend) async throws {
        let database = try Database(backend: backend)
        let delta = Delta(tableName: "sqlite_master", keyFields: [], loggedFields: [], changes: [DeltaChange(changeId: 1, type: .delete)])
        await #expect(throws: RelataError.self) { try await database.service.updateData([delta], session: Session()) }
    }
}

import Foundation
import Relata
import RelataScript
@testable import RelataServer
import RelataServerTestSupport
import Testing

/// A where expression on a lookup field that SQL cannot decide is filtered by Relata's evaluator
/// over chunks of stored rows: each chunk loads only the lookup rows it points to, not the lookup
/// table whole — and answers as if it had.
@Suite(.timeLimit(.minutes(5))) struct LookupFilterTests {
    static let clients = [FieldDefinition("ClientId", .integer, primaryKey: true), FieldDefinition("Name", .string, size: 40)]
    static let orders = [FieldDefinition("OrderId", .integer, primaryKey: true), FieldDefinition("ClientId", .integer),
                         FieldDefinition("Amount", .integer)]
    static let staff = [FieldDefinition("StaffId", .integer, primaryKey: true), FieldDefinition("Name", .string, size: 40),
                        FieldDefinition("ManagerId", .integer)]

    /// 2,000 clients; 30 orders of three of them; staff who look up their own managers.
    final class Setup {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("relata-lookups-\(UUID().uuidString)")
        let storage: SQLStorage
        private let cleanup: @Sendable () -> Void

        init(_ backend: StorageBackend) throws {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let database: any SQLDatabase
            (database, cleanup) = try backend.makeDatabase(in: folder, readers: 2)
            let schema = try SchemaDefinition(name: "Shop", tables: [
                TableDefinition(name: "Clients", fields: LookupFilterTests.clients),
                TableDefinition(name: "Orders", fields: LookupFilterTests.orders, script: RuleScript("""
                    function clientOrders(row) { return lda.selectWhere('Orders', 'ClientId = :c', { c: row.ClientId }).length; }
                    """, fileName: "Orders.js"), lookupFields: [
                    LookupFieldDefinition(name: "ClientName", sourceField: "ClientId", lookupTable: "Clients", lookupKeyField: "ClientId", lookupResultField: "Name"),
                ], calculatedFields: [CalculatedFieldDefinition(name: "ClientOrders", type: .integer, function: "clientOrders")]),
                TableDefinition(name: "Staff", fields: LookupFilterTests.staff, lookupFields: [
                    LookupFieldDefinition(name: "ManagerName", sourceField: "ManagerId", lookupTable: "Staff", lookupKeyField: "StaffId", lookupResultField: "Name"),
                ]),
            ])
            storage = try SQLStorage(database: database, schema: schema)
            let clients = try DataTable(name: "Clients", fields: LookupFilterTests.clients)
            try clients.loadRows((1...2000).map { [.integer(Int64($0)), .string("Client \($0)")] })
            let orders = try DataTable(name: "Orders", fields: LookupFilterTests.orders)
            try orders.loadRows((1...30).map { [.integer(Int64($0)), .integer([7, 700, 1999][$0 % 3]), .integer(Int64($0 * 10))] })
            let staff = try DataTable(name: "Staff", fields: LookupFilterTests.staff,
                                      csv: "StaffId,Name,ManagerId\n1,Ann,\n2,Bob,1\n3,Cy,1\n4,Di,2\n5,Ed,3\n")
            _ = try storage.seedIfEmpty(with: [clients, orders, staff])
        }

        deinit {
            cleanup()
            try? FileManager.default.removeItem(at: folder)
        }

        /// The keys of the rows a GetData of `table` with `expression` answers, and the rows the
        /// read loaded of `lookupTable`, read in chunks of `batchRows` (with calculated fields when
        /// there is a `runtime`).
        func read(_ table: String, where expression: String, batchRows: Int = 4, lookupTable: String,
                  runtime: RuleRuntime? = nil) throws -> (keys: [Value], lookupRows: Int) {
            try storage.read { connection in
                let data = SQLDataAccess(storage: storage, schema: storage.schema, connection: connection, runtime: runtime)
                var reader = TableReader(storage: storage, data: data)
                reader.batchRows = batchRows
                var keys: [Value] = []
                func read() throws {
                    try reader.read(DataRequest(table: table, where: expression), expression: Relata.Expression(expression), in: connection) { event in
                        if case .rows(let rows) = event { keys += (0..<rows.count).map { rows[$0, 0] } }
                    }
                }
                if let runtime {
                    try runtime.withEnvironment(RuleEnvironment(session: Session(), isServer: true, dataAccess: data)) { try read() }
                } else {
                    try read()
                }
                return (keys, try data.table(lookupTable).rowCount)
            }
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func aFilterOnALookupFieldLoadsOnlyTheLookupRowsItsRowsPointTo(backend: StorageBackend) throws {
        let setup = try Setup(backend)
        // LIKE is left to the evaluator: every stored order goes through it.
        let (keys, clientsRead) = try setup.read("Orders", where: "ClientName LIKE 'Client 7%'", lookupTable: "Clients")
        let expected = (1...30).filter { [7, 700, 1999][$0 % 3] != 1999 }.map { Value.integer(Int64($0)) }
        #expect(keys == expected)
        #expect(clientsRead == 3, "the three clients the orders name, not all 2,000")

        let (none, _) = try setup.read("Orders", where: "ClientName IS NULL OR ClientName LIKE 'Nobody%'", lookupTable: "Clients")
        #expect(none.isEmpty)
    }

    /// A table that looks up its own rows: the rows a lookup loads never join the rows being
    /// filtered, so each answers once, and only the managers the rows name are read.
    @Test(arguments: StorageBackend.allCases)
    func aTableThatLooksUpItsOwnRowsAnswersEachRowOnce(backend: StorageBackend) throws {
        let setup = try Setup(backend)
        let (keys, staffRead) = try setup.read("Staff", where: "ManagerName LIKE 'A%' OR ManagerName LIKE 'C%'", batchRows: 2, lookupTable: "Staff")
        #expect(keys == [2, 3, 5])
        #expect(staffRead == 3, "the managers Ann, Bob and Cy")
    }

    /// A calculated field that reads its own table through `lda` loads that table whole — into the
    /// unit's table, not the one the rows are filtered through: more rows than one chunk holds
    /// still answer once each.
    @Test(arguments: StorageBackend.allCases)
    func aCalculatedFieldReadingItsOwnTableAnswersEachRowOnce(backend: StorageBackend) throws {
        let setup = try Setup(backend)
        let runtime = try RuleRuntime()
        try runtime.load(setup.storage.schema)
        let (keys, ordersRead) = try setup.read("Orders", where: "ClientOrders = 10", lookupTable: "Orders", runtime: runtime)
        #expect(keys == (1...30).map { .integer(Int64($0)) }, "each order once, in order")
        #expect(ordersRead == 30)
    }
}

import Foundation
import Relata
import RelataScript
import RelataServer
import RelataServerTestSupport
import RelataTestSupport
import Testing

/// Reading through the server's data service: published names only, the expression
/// language evaluated as on every site, data events with the caller's session.
@Suite(.timeLimit(.minutes(10))) struct GetDataTests {
    typealias Database = DataServiceTests.Database

    static func request(_ table: String, _ expression: String? = nil, _ parameters: [String: Value] = [:],
                        fields: [String]? = nil, max: Int? = nil) -> DataRequest {
        DataRequest(table: table, fields: fields, where: expression, parameters: parameters, maxRecords: max)
    }

    @Test(arguments: StorageBackend.allCases)
    func tablesComeWholeOrByFieldsRowsAndCount(backend: StorageBackend) async throws {
        let database = try Database(backend: backend)
        defer { withExtendedLifetime(database) {} }   // its database lives as long as the test
        let service = database.service
        let all = try await service.getData([Self.request("Clients"), Self.request("Orders", fields: ["OrderId"], max: 1)], session: Session())
        #expect(all[0].rows.count == 2)
        #expect(all[0].fields.map(\.name) == ["ClientId", "Name", "CreditLimit"])
        #expect(all[1].fields.map(\.name) == ["OrderId"])
        #expect(all[1].rows == [[10]])
        let cheap = try await service.getData([Self.request("OrderDetails", "OrderId = :order AND UnitPrice < 10", ["order": 10])],
                                              session: Session())
        #expect(cheap[0].rows.map { $0[0] } == [100])
        #expect(cheap[0].rows[0][4] == .decimal(Decimal(string: "9.99")!))
    }

    /// The same expressions over the same rows give the same rows on the server (SQL narrows,
    /// the evaluator decides) as in memory, NULLs and mixed types included.
    @Test(arguments: StorageBackend.allCases)
    func whereExpressionsSelectTheSameRowsAsInMemory(backend: StorageBackend) async throws {
        let database = try Database(backend: backend)
        let (clients, orders, details) = try DataServiceTests.clientTables()
        try orders.addNewRow(values: ["ClientId": 1])   // Status NULL
        _ = try await database.service.updateData([orders.makeDelta()], session: Session())
        let stored = try await database.service.getData([Self.request("Orders")], session: Session())[0]
        let memoryOrders = try DataTable(stored)
        let cases: [(String, String, [String: Value])] = [
            ("Orders", "Status = 'open'", [:]), ("Orders", "Status <> 'open'", [:]), ("Orders", "Status IS NULL", [:]),
            ("Orders", "NOT Status = 'open'", [:]), ("Orders", "OrderId > 10 OR Status IS NULL", [:]),
            ("Orders", "OrderId IN (10, 12, 99)", [:]), ("Orders", "ClientId = :c", ["c": 1]), ("Orders", "ClientId = :c", ["c": .null]),
            ("Orders", "ClientId = :c", ["c": "1"]), ("Orders", "12 <= OrderId", [:]), ("Orders", "UPPER(Status) = 'OPEN'", [:]),
            ("Orders", "Status LIKE 'OP%'", [:]), ("Orders", "OrderId = 10.5", [:]), ("Orders", "OrderId BETWEEN 10 AND 11 AND ClientId <> 2", [:]),
            ("OrderDetails", "UnitPrice > 10", [:]), ("OrderDetails", "UnitPrice = 9.99 AND Quantity >= 2", [:]),
            ("OrderDetails", "Product = 'Widget' OR UnitPrice > :p", ["p": 20]), ("OrderDetails", "Quantity * UnitPrice > 20", [:]),
            ("Clients", "CreditLimit >= 1000 OR Name = 'Globex'", [:]), ("Clients", "Name IN ('Acme', 'acme')", [:]),
            // Several values pushed down to SQL: each gets its own placeholder ($1, $2, … on PostgreSQL).
            ("Orders", "Status = 'open' AND ClientId = 2", [:]), ("Orders", "(OrderId > :a AND ClientId = :c) OR OrderId IN (10, 11)", ["a": 10, "c": 1]),
            ("Orders", "OrderId IN (10, 11) AND UPPER(Status) = 'OPEN' AND ClientId = :c AND Status <> 'closed'", ["c": 2]),
        ]
        for (table, expression, parameters) in cases {
            let memory = table == "Orders" ? memoryOrders : table == "Clients" ? clients : details
            let expected: Result<[Value], RelataError>
            do {
                expected = .success(try memory.rows(where: expression, parameters: parameters).map { $0[memory.primaryKeyFields[0].name] })
            } catch let error as RelataError {
                expected = .failure(error)
            }
            let served: Result<[Value], RelataError>
            do {
                served = .success(try await database.service.getData([Self.request(table, expression, parameters)], session: Session())[0].rows.map { $0[0] })
            } catch let error as RelataError {
                served = .failure(error)
            }
            #expect(served == expected, "\(table): \(expression)")
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func anythingUnpublishedOrMalformedIsRefusedNamingIt(backend: StorageBackend) async throws {
        let database = try Database(backend: backend)
        defer { withExtendedLifetime(database) {} }   // its database lives as long as the test
        let service = database.service
        func refusal(_ request: DataRequest) async -> RelataError? {
            do {
                _ = try await service.getData([request], session: Session())
                return nil
            } catch let error as RelataError {
                return error
            } catch {
                return nil
            }
        }
        #expect(await refusal(Self.request("sqlite_master"))?.code == .unknownTable)
        #expect(await refusal(Self.request("Clients", fields: ["Password"]))?.field == "Password")
        #expect(await refusal(Self.request("Clients", "Secret = 1"))?.field == "Secret")
        #expect(await refusal(Self.request("Clients", "ClientId = 1; DROP TABLE Clients"))?.code == .expressionSyntax)
        #expect(await refusal(Self.request("Clients", "ClientId = 1 -- comment"))?.field == "comment", "-- is not a comment: two minus signs")
        #expect(await refusal(Self.request("Clients", max: -1))?.code == .invalidArgument)
        #expect(await refusal(Self.request("Clients", fields: []))?.code == .invalidArgument)
        let quoted = try await service.getData([Self.request("Clients", "Name = 'x'' OR 1=1 --'")], session: Session())
        #expect(quoted[0].rows.isEmpty, "a quote inside a string literal is part of the string")
        #expect(try await service.getData([Self.request("Clients")], session: Session())[0].rows.count == 2, "nothing was dropped")
    }

    @Test(arguments: StorageBackend.allCases)
    func dataEventsRunOnTheServerWithTheCallersSession(backend: StorageBackend) async throws {
        let schema = try DataServiceTests.schema()
        var withReadRule = schema
        withReadRule.script = RuleScript("""
            function beforeGetData(names, requests) {
                if (names.indexOf('Clients') >= 0 && !session.hasRole('Sales')) fail('only sales read clients' + (isServer ? ' (server)' : ''));
            }
            """, fileName: "schema.js")
        let database = try Database(schema: SchemaDefinition(name: withReadRule.name, tables: withReadRule.tables, script: withReadRule.script,
                                                             updateOrder: withReadRule.updateOrder), backend: backend)
        defer { withExtendedLifetime(database) {} }   // its database lives as long as the test
        let service = database.service
        await #expect(throws: ScriptError.self) { try await service.getData([Self.request("Clients")], session: Session()) }
        do {
            _ = try await service.getData([Self.request("Clients")], session: Session())
        } catch let error as ScriptError {
            #expect(error.message == "only sales read clients (server)")
            #expect(error.event == "beforeGetData")
        }
        let allowed = try await service.getData([Self.request("Clients")], session: Session(roles: ["Sales"]))
        #expect(allowed[0].rows.count == 2)
    }
}

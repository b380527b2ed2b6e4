import Foundation
import Relata
import RelataRemote
import RelataServerTestSupport
import Testing

/// Rules that read and then write hold under concurrent applies on every database: the server's
/// replay, rules and `lda` reads run inside the apply's serializable transaction.
@Suite(.timeLimit(.minutes(10))) struct ConcurrentApplyTests {
    /// Twenty clerks add a line of 100.00 to one open order (a line of 100.00 already) of a client
    /// whose credit limit is 500.00, all at once: PCTrade's credit rule lets exactly four through,
    /// and tells the others why.
    @Test(arguments: StorageBackend.allCases)
    func twentyClerksAtOnceCannotTakeAClientPastItsCreditLimit(backend: StorageBackend) async throws {
        let server = try PCTradeServer(backend: backend)
        try await server.serve { url in
            let setup = demoAdapter(url)
            let clients = try await setup.getDataTable("Clients")
            let client = try clients.addNewRow(values: ["ClientName": "Tight Credit Ltd", "ContactPhone": "555-0199"])
            try client.setValue(500, forKey: "CreditLimit")
            try await setup.applyChanges(for: clients)
            let products = try await setup.getDataTable("Products")
            let product = try #require(products.rows.first { $0["Discontinued"] != true })["ProductId"]
            let orders = try await setup.getDataTable("Orders", where: "ClientId = -1")
            let firstLines = try await setup.getDataTable("OrderDetails", where: "OrderId = -1")
            let order = try orders.addNewRow(values: ["ClientId": client["ClientId"]])
            try firstLines.addNewRow(values: ["OrderId": order["OrderId"], "ProductId": product, "Quantity": 1, "UnitPrice": 100])
            let ordered = try await setup.applyChanges(for: [orders, firstLines])
            try #require(ordered.flatMap(\.changes).map(\.status) == [.resolved, .resolved], "\(ordered.flatMap(\.changes).compactMap(\.message))")
            let orderId = order["OrderId"]

            // Each clerk logs in, reads and types his line first (logins are throttled); then all apply at once.
            var clerks: [Clerk] = []
            for _ in 0..<20 { clerks.append(try await Clerk(addingLineOf: 100, to: orderId, product: product, at: url)) }
            let verdicts = try await withThrowingTaskGroup(of: DeltaChange.self) { group in
                for clerk in clerks { group.addTask { try await clerk.apply() } }
                return try await group.reduce(into: [DeltaChange]()) { $0.append($1) }
            }
            #expect(verdicts.count == 20)
            #expect(verdicts.filter { $0.status == .resolved }.count == 4)
            for refused in verdicts where refused.status != .resolved {
                #expect(refused.message?.contains("above the credit limit of 500.00") == true, "\(refused.message ?? "no message")")
            }
            let stored = try server.service.storedRows(of: "OrderDetails").filter { $0["OrderId"] == orderId }
            #expect(stored.count == 5, "the stored lines stay within the credit limit")
        }
    }

    /// One clerk with his line typed, on a client of his own, ready to apply.
    final class Clerk: @unchecked Sendable {
        // @unchecked Sendable: each clerk's adapter is used by one task at a time (made, then applied once).
        let adapter: RemoteDataAdapter
        let lines: DataTable

        init(addingLineOf price: Int, to order: Value, product: Value, at url: URL) async throws {
            adapter = demoAdapter(url)
            let tables = try await adapter.getDataTables([DataRequest(table: "Clients"), DataRequest(table: "Products"),
                                                          DataRequest(table: "Orders", where: "OrderId = :o", parameters: ["o": order]),
                                                          DataRequest(table: "OrderDetails", where: "OrderId = :o", parameters: ["o": order])])
            lines = tables[3]
            try lines.addNewRow(values: ["OrderId": order, "ProductId": product, "Quantity": 1, "UnitPrice": .integer(Int64(price))])
        }

        func apply() async throws -> DeltaChange {
            let delta = try await adapter.applyChanges(for: lines)
            guard let change = delta.changes.first else { throw RelataError(.invalidDelta, "the apply answered no change") }
            return change
        }
    }
}

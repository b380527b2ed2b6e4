import Relata
@testable import RelataScript
import RelataTestSupport
import Testing

/// DA SQL over a LocalDataAdapter's tables.
@Suite struct AdapterQueryTests {
    @Test func aQueryReadsTheAdaptersTablesWithTheirPendingChanges() throws {
        let adapter = try LocalDataAdapter(engine: ScriptEngine(timeLimit: .seconds(2)))
        let clients = try DataTable(name: "Clients", fields: [FieldDefinition("ClientId", .integer, primaryKey: true), FieldDefinition("Name", .string)])
        try clients.loadRows([[1, "Acme"], [2, "Globex"]])
        let orders = try DataTable(name: "Orders", fields: [FieldDefinition("OrderId", .integer, primaryKey: true), FieldDefinition("ClientId", .integer),
                                                            FieldDefinition("Status", .string)])
        try orders.loadRows([[10, 1, "open"], [11, 2, "paid"]])
        try adapter.addTable(clients)
        try adapter.addTable(orders)
        _ = try orders.addNewRow(values: ["OrderId": 12, "ClientId": 2, "Status": "open"])

        let open = try adapter.table(sql: """
            SELECT c.Name, COUNT(*) AS Orders FROM Clients c JOIN Orders o ON o.ClientId = c.ClientId
            WHERE o.Status = :status GROUP BY c.Name ORDER BY c.Name
            """, parameters: ["status": "open"])
        #expect(open.rows.map { [$0["Name"], $0["Orders"]] } == [["Acme", 1], ["Globex", 1]])
        let error = try #require(relataErrorThrown { _ = try adapter.table(sql: "SELECT * FROM Ordrs") })
        #expect(error.code == .unknownTable && error.message == "no table 'Ordrs' (did you mean Orders?)")
    }

    private func relataErrorThrown(_ body: () throws -> Void) -> RelataError? {
        do {
            try body()
            return nil
        } catch {
            return error as? RelataError
        }
    }
}

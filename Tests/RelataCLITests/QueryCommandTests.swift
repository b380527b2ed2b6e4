import Foundation
import Testing

/// `relata query`: DA SQL over a schema's data, offline.
@Suite(.timeLimit(.minutes(10))) struct QueryCommandTests {
    let schema = RelataProcess.pcTradeSchema

    @Test func printsTheAnswerAsATableOrJSON() async throws {
        let query = """
            SELECT c.ClientName, COUNT(*) AS Orders FROM Clients c JOIN Orders o ON o.ClientId = c.ClientId
            WHERE c.ClientId <= :last GROUP BY c.ClientName ORDER BY Orders DESC, 1 LIMIT 2
            """
        let table = try await RelataProcess.run(["query", schema, query, "--param", "last=3"])
        #expect(table.status == 0, "\(table.errorOutput)")
        let lines = table.output.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("ClientName") == true && lines.first?.contains("Orders") == true)
        #expect(lines.last == "2 rows")
        let json = try await RelataProcess.run(["query", schema, query, "--param", "last=3", "--json"])
        let rows = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]]
        #expect(rows?.count == 2)
        #expect(rows?.first?["Orders"] as? Int ?? 0 >= rows?.last?["Orders"] as? Int ?? 0)
    }

    @Test func aBadQuerySaysWhereAndWhatWasMeant() async throws {
        let misspelt = try await RelataProcess.run(["query", schema, "SELECT ClientNme\nFROM Clients"])
        #expect(misspelt.status == 2)
        #expect(misspelt.errorOutput.contains("line 1, column 8: no field 'ClientNme' in Clients (did you mean ClientName?)"))
        let stacked = try await RelataProcess.run(["query", schema, "SELECT * FROM Clients; DROP TABLE Clients"])
        #expect(stacked.status == 2)
        #expect(stacked.errorOutput.contains("line 1, column 24: DA SQL runs one statement: nothing may follow ';'"))
        #expect(try await RelataProcess.run(["query", schema, "SELECT 1 FROM Clients", "--param", "oops"]).status == 64)
    }
}

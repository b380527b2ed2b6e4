import Foundation
import Testing
@testable import Relata

/// DA SQL over in-memory tables: the answers SQL gives, pending changes included.
@Suite struct DASQLEngineTests {
    static func tables() throws -> (clients: DataTable, orders: DataTable) {
        let clients = try DataTable(name: "Clients", fields: [FieldDefinition("ClientId", .integer, primaryKey: true),
                                                              FieldDefinition("Name", .string), FieldDefinition("City", .string)])
        try clients.loadRows([[1, "Acme", "Oslo"], [2, "Globex", "Riga"], [3, "Initech", .null], [4, "Hooli", "Oslo"]])
        let orders = try DataTable(name: "Orders", fields: [FieldDefinition("OrderId", .integer, primaryKey: true), FieldDefinition("ClientId", .integer),
                                                            FieldDefinition("Total", .currency), FieldDefinition("Status", .string)])
        try orders.loadRows([[10, 1, .decimal(100), "open"], [11, 1, .decimal(50.5), "paid"], [12, 2, .decimal(20), "open"],
                             [13, .null, .decimal(5), "open"], [14, 2, .null, "void"]])
        return (clients, orders)
    }

    func answer(_ text: String, _ parameters: [String: Value] = [:]) throws -> [[Value]] {
        let (clients, orders) = try Self.tables()
        return try rows(DataTable(query: DASQLQuery(text), parameters: parameters, over: [clients, orders]))
    }

    func rows(_ table: DataTable) -> [[Value]] {
        table.rows.map { row in table.fields.map { row[$0.name] } }
    }

    @Test func filtersProjectsAndOrders() throws {
        #expect(try answer("SELECT Name FROM Clients WHERE City = 'Oslo' ORDER BY Name DESC") == [["Hooli"], ["Acme"]])
        #expect(try answer("SELECT City FROM Clients ORDER BY City") == [[.null], ["Oslo"], ["Oslo"], ["Riga"]], "NULLs first")
        #expect(try answer("SELECT DISTINCT City FROM Clients ORDER BY 1 DESC") == [["Riga"], ["Oslo"], [.null]])
        #expect(try answer("SELECT ClientId * 10 AS Ten, UPPER(Name) FROM Clients ORDER BY ClientId LIMIT 2 OFFSET 1") == [[20, "GLOBEX"], [30, "INITECH"]])
        #expect(try answer("SELECT Name FROM Clients WHERE ClientId > :min ORDER BY ClientId", ["min": 2]) == [["Initech"], ["Hooli"]])
        #expect(try answer("SELECT 7 / 2 FROM Clients LIMIT 1") == [[.double(3.5)]], "Relata's division")
    }

    @Test func innerAndLeftJoins() throws {
        #expect(try answer("SELECT c.Name, o.OrderId FROM Clients c JOIN Orders o ON o.ClientId = c.ClientId ORDER BY o.OrderId")
                == [["Acme", 10], ["Acme", 11], ["Globex", 12], ["Globex", 14]])
        #expect(try answer("SELECT c.Name, o.OrderId FROM Clients c LEFT JOIN Orders o ON o.ClientId = c.ClientId AND o.Status = 'open'")
                == [["Acme", 10], ["Globex", 12], ["Initech", .null], ["Hooli", .null]], "left rows in order, unmatched once")
        #expect(try answer("SELECT c.Name, o.OrderId FROM Clients c JOIN Orders o ON o.Total > 60 AND c.City = 'Riga'") == [["Globex", 10]],
                "a join without an equality")
    }

    @Test func groupsAggregatesAndHaving() throws {
        #expect(try answer("""
            SELECT c.Name, COUNT(*) AS Lines, COUNT(o.Total) AS Priced, SUM(o.Total) AS Spent, MAX(o.Status)
            FROM Clients c LEFT JOIN Orders o ON o.ClientId = c.ClientId
            GROUP BY c.Name HAVING COUNT(o.OrderId) > 0 ORDER BY Spent DESC
            """) == [["Acme", 2, 2, .decimal(150.5), "paid"], ["Globex", 2, 1, .decimal(20), "void"]])
        #expect(try answer("SELECT COUNT(*), SUM(Total), AVG(ClientId), MIN(Status) FROM Orders WHERE OrderId > 99")
                == [[0, .null, .null, .null]], "one group of no rows")
        #expect(try answer("SELECT COUNT(DISTINCT ClientId), AVG(ClientId) FROM Orders") == [[2, .double(1.5)]])
        #expect(try answer("SELECT Status, COUNT(*) FROM Orders GROUP BY Status ORDER BY 2 DESC, Status") == [["open", 3], ["paid", 1], ["void", 1]])
    }

    @Test func subqueries() throws {
        #expect(try answer("SELECT Name FROM Clients WHERE ClientId IN (SELECT ClientId FROM Orders WHERE Status = 'open') ORDER BY Name")
                == [["Acme"], ["Globex"]])
        // NOT IN over a list holding NULL is never true, as in SQL.
        #expect(try answer("SELECT Name FROM Clients WHERE ClientId NOT IN (SELECT ClientId FROM Orders)") == [])
        #expect(try answer("""
            SELECT Name FROM Clients c WHERE NOT EXISTS (SELECT * FROM Orders o WHERE o.ClientId = c.ClientId) ORDER BY Name
            """) == [["Hooli"], ["Initech"]], "correlated")
    }

    @Test func pendingChangesAreWhatTheQuerySees() throws {
        let (clients, orders) = try Self.tables()
        try clients.rows[0].setValue("Acme Holdings", forKey: "Name")
        try clients.removeRow(clients.rows[3])
        _ = try clients.addNewRow(values: ["ClientId": 5, "Name": "Umbrella", "City": "Oslo"])
        let table = try DataTable(query: DASQLQuery("SELECT Name FROM Clients WHERE City = 'Oslo' ORDER BY ClientId"), over: [clients, orders])
        #expect(rows(table) == [["Acme Holdings"], ["Umbrella"]])
        #expect(table.name == "Query" && table.fields.map(\.name) == ["Name"])
    }

    @Test func evaluationErrorsGiveTheLineAndColumn() throws {
        let strings = relataError { _ = try answer("SELECT SUM(Name)\nFROM Clients") }
        #expect(strings?.code == .expressionEvaluation)
        #expect(strings?.message == "SUM needs numbers, got string 'Acme'")
        #expect(strings?.location == "line 1, column 8")
        let big = try DataTable(name: "Big", fields: [FieldDefinition("Amount", .largeInt)])
        try big.loadRows([[.integer(.max)], [.integer(.max - 1)]])
        let overflow = relataError { _ = try DataTable(query: DASQLQuery("SELECT SUM(Amount) FROM Big"), over: [big]) }
        #expect(overflow?.code == .expressionEvaluation)
        #expect(overflow?.message.hasPrefix("SUM: ") == true, "\(overflow?.message ?? "")")
    }

    /// `key = value` first in WHERE goes through the primary key's index, pending changes
    /// included, and the answer is the scan's (a correlated subquery looks its key up per row).
    @Test func aKeyComparedFirstIsFoundThroughTheIndex() throws {
        let (clients, orders) = try Self.tables()
        try clients.addNewRow(values: ["ClientId": 5, "Name": "Umbrella", "City": "Oslo"])
        try clients.rows[1].setValue("Globex Corp", forKey: "Name")
        try clients.removeRow(clients.rows[2])
        func answer(_ text: String, _ parameters: [String: Value] = [:]) throws -> [[Value]] {
            try rows(DataTable(query: DASQLQuery(text), parameters: parameters, over: [clients, orders]))
        }
        #expect(try answer("SELECT Name FROM Clients WHERE ClientId = :id", ["id": 5]) == [["Umbrella"]])
        #expect(clients.indexes[0] != nil, "the key's index served the query")
        #expect(try answer("SELECT Name FROM Clients WHERE ClientId = 2.0 AND City = 'Riga'") == [["Globex Corp"]])
        #expect(try answer("SELECT Name FROM Clients WHERE ClientId = 3").isEmpty, "a deleted row is not found")
        #expect(try answer("SELECT Name FROM Clients WHERE ClientId = 2.5").isEmpty)
        #expect(try answer("SELECT Name FROM Clients WHERE ClientId = NULL").isEmpty)
        #expect(try answer("SELECT o.OrderId FROM Orders o WHERE EXISTS (SELECT 1 FROM Clients c WHERE c.ClientId = o.ClientId AND c.City = 'Oslo') ORDER BY 1")
                == [[10], [11]])
        // A string compared with the integer key is an error, as it is in a scan.
        #expect(throws: RelataError.self) { try answer("SELECT Name FROM Clients WHERE ClientId = '1'") }
    }

    /// Conditions of WHERE that cannot fail run before the joins; the answer, and whether the
    /// query fails, are as if every joined row were tested.
    @Test func conditionsThatCannotFailRunBeforeTheJoins() throws {
        #expect(try answer("SELECT o.OrderId, c.Name FROM Orders o JOIN Clients c ON c.ClientId = o.ClientId WHERE c.City = 'Riga' ORDER BY 1")
                == [[12, "Globex"], [14, "Globex"]])
        #expect(try answer("SELECT o.OrderId FROM Clients c LEFT JOIN Orders o ON o.ClientId = c.ClientId WHERE o.OrderId IS NULL AND c.City = 'Oslo'")
                == [[.null]], "a LEFT JOIN's table is not filtered before the join")
        // An ON that fails fails the query even when WHERE would have kept nothing.
        #expect(throws: RelataError.self) {
            try answer("SELECT c.Name FROM Clients c JOIN Orders o ON o.Status > c.ClientId WHERE c.City = 'Nowhere'")
        }
        // A hash join's keys of kinds that do not compare fail as comparing them pair by pair does.
        #expect(throws: RelataError.self) {
            try answer("SELECT c.Name FROM Clients c JOIN Orders o ON o.Status = c.ClientId")
        }
        // So does a first condition that fails, whatever the conditions after it.
        #expect(throws: RelataError.self) {
            try answer("SELECT c.Name FROM Clients c JOIN Orders o ON o.ClientId = c.ClientId WHERE o.Status = 1 AND c.City = 'Nowhere'")
        }
        #expect(try answer("SELECT c.Name FROM Clients c JOIN Orders o ON o.ClientId = c.ClientId WHERE c.City = 'Nowhere' AND o.Status = 1").isEmpty,
                "a condition after one that keeps nothing is never evaluated, before or after the joins")
    }

    /// A join that would make more rows than a process should hold fails with a clear error
    /// (on a data server too: a client cannot make it run out of memory).
    @Test func aJoinTooLargeToMakeFailsClearly() throws {
        let numbers = try DataTable(name: "Numbers", fields: [FieldDefinition("N", .integer, primaryKey: true)])
        try numbers.loadRows((0..<4_000).map { [.integer(Int64($0))] })
        do {
            _ = try DataTable(query: DASQLQuery("SELECT COUNT(*) FROM Numbers a JOIN Numbers b ON a.N <> b.N"), over: [numbers])
            Issue.record("16 million pairs were made")
        } catch let error as RelataError {
            #expect(error.message.contains("the join would make more than 10 million rows"))
            #expect(error.location == "line 1, column 54", "the ON operator")
        }
        let small = try DataTable(query: DASQLQuery("SELECT COUNT(*) AS N FROM Numbers a JOIN Numbers b ON a.N = b.N"), over: [numbers])
        #expect(small.rows[0]["N"] == 4_000)
    }
}

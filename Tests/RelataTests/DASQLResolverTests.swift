import Testing
@testable import Relata

/// DA SQL checked against a catalog: names found (or refused with "did you mean"), fields
/// qualified, stars expanded, groups checked, columns named and typed.
@Suite struct DASQLResolverTests {
    static let catalog = QueryCatalog([
        .init(name: "Clients", fields: [FieldDefinition("ClientId", .autoInc, primaryKey: true), FieldDefinition("ClientName", .string, size: 50),
                                        FieldDefinition("CreditLimit", .currency)]),
        .init(name: "Orders", fields: [FieldDefinition("OrderId", .autoInc, primaryKey: true), FieldDefinition("ClientId", .integer),
                                       FieldDefinition("OrderDate", .dateTime), FieldDefinition("Total", .currency)]),
    ])

    func resolved(_ text: String, _ parameters: [String: Value] = [:]) throws -> ResolvedQuery {
        try DASQLQuery(text).resolved(in: Self.catalog, parameters: parameters)
    }

    func failure(_ text: String, _ parameters: [String: Value] = [:]) -> RelataError? {
        relataError { _ = try resolved(text, parameters) }
    }

    @Test func namesAreQualifiedAndStarsExpanded() throws {
        let query = try resolved("select clientname, o.* from clients join Orders o on o.clientid = clients.CLIENTID where total > :min",
                                 ["min": 10])
        #expect(query.statement.from.name == "Clients")
        #expect(query.columns.map(\.name) == ["ClientName", "OrderId", "ClientId", "OrderDate", "Total"])
        #expect(query.columns.map(\.type) == [.string, .autoInc, .integer, .dateTime, .currency])
        guard case .expression(.qualifiedField("Clients", "ClientName", _), nil, _) = query.statement.columns[0] else {
            Issue.record("\(query.statement.columns[0])")
            return
        }
        guard case .binary(.greater, .qualifiedField("o", "Total", _), .parameter("min", _), _) = query.statement.filter else {
            Issue.record("\(String(describing: query.statement.filter))")
            return
        }
        #expect(!query.isAggregate)
    }

    @Test func groupsAggregatesAndOrder() throws {
        let query = try resolved("""
            SELECT c.ClientName, COUNT(*) AS Orders, SUM(o.Total) Spent, AVG(o.Total * 2) / 3
            FROM Clients c LEFT JOIN Orders o ON o.ClientId = c.ClientId
            GROUP BY c.ClientName HAVING COUNT(*) > 0 ORDER BY Spent DESC, 1 LIMIT :n
            """, ["n": 5])
        #expect(query.isAggregate)
        #expect(query.columns.map(\.name) == ["ClientName", "Orders", "Spent", "Column4"])
        #expect(query.columns.map(\.type) == [.string, .largeInt, .decimal, .decimal])
        #expect(query.statement.limit == .literal(.integer(5)))
        guard case .aggregate(.sum, _, false, _) = query.statement.orderBy[0].expression,
              case .qualifiedField("c", "ClientName", _) = query.statement.orderBy[1].expression else {
            Issue.record("\(query.statement.orderBy)")
            return
        }
    }

    @Test func correlatedSubqueriesSeeTheOuterTables() throws {
        let query = try resolved("""
            SELECT ClientName FROM Clients c
            WHERE EXISTS (SELECT * FROM Orders o WHERE o.ClientId = c.ClientId AND Total > 100)
              AND ClientId IN (SELECT ClientId FROM Orders)
            """)
        #expect(query.columns.map(\.name) == ["ClientName"])
        #expect(try resolved("SELECT * FROM Clients WHERE ClientId IN (SELECT o.ClientId FROM Orders o WHERE o.ClientId = Clients.ClientId)").columns.count == 3)
    }

    @Test func unknownAndAmbiguousNamesAreRefusedWithWhereAndWhatWasMeant() {
        let cases: [(String, RelataError.Code, String, String)] = [
            ("SELECT * FROM Clinets", .unknownTable, "no table 'Clinets' (did you mean Clients?)", "line 1, column 15"),
            ("SELECT ClientNme FROM Clients", .unknownField, "no field 'ClientNme' in Clients (did you mean ClientName?)", "line 1, column 8"),
            ("SELECT c.Totl FROM Orders c", .unknownField, "Orders (c) has no field 'Totl' (did you mean Total?)", "line 1, column 8"),
            ("SELECT x.Total FROM Orders o", .unknownTable, "the query has no table called 'x' (did you mean o?)", "line 1, column 8"),
            ("SELECT Orders.Total FROM Orders o", .unknownTable, "the query has no table called 'Orders'", "line 1, column 8"),
            ("SELECT ClientId FROM Clients JOIN Orders ON Orders.ClientId = Clients.ClientId", .querySyntax,
             "'ClientId' is a field of Clients and Orders; say which (Clients.ClientId)", "line 1, column 8"),
            ("SELECT * FROM Orders o JOIN Orders o ON 1 = 1", .querySyntax, "the query calls two tables 'o'; give one another name (… AS other)", "line 1, column 29"),
            ("SELECT * FROM Orders WHERE COUNT(*) > 1", .querySyntax, "COUNT cannot stand in WHERE", "line 1, column 28"),
            ("SELECT SUM(MAX(Total)) FROM Orders", .querySyntax, "MAX cannot stand inside another aggregate", "line 1, column 12"),
            ("SELECT ClientId, COUNT(*) FROM Orders", .querySyntax, "Orders.ClientId is neither in GROUP BY nor inside an aggregate", "line 1, column 8"),
            ("SELECT Total FROM Orders GROUP BY ClientId", .querySyntax, "Orders.Total is neither in GROUP BY nor inside an aggregate", "line 1, column 8"),
            ("SELECT * FROM Orders ORDER BY 9", .querySyntax, "ORDER BY 9 names no column (the query has 4)", "line 1, column 31"),
            ("SELECT DISTINCT ClientId FROM Orders ORDER BY Total", .querySyntax, "with SELECT DISTINCT, ORDER BY uses the columns selected", "line 1, column 47"),
            ("SELECT * FROM Orders LIMIT -1", .querySyntax, "LIMIT must be a whole number from 0, not integer -1", "line 1, column 28"),
            ("SELECT * FROM Orders LIMIT :n", .expressionEvaluation, "no value was given for parameter :n (given: none)", "line 1, column 28"),
            ("SELECT * FROM Orders WHERE Total > :min", .expressionEvaluation, "no value was given for parameter :min (given: none)", "line 1, column 36"),
            ("SELECT UPPR(ClientName) FROM Clients", .querySyntax, "no function UPPR (did you mean UPPER?)", "line 1, column 8"),
            ("SELECT * FROM Orders WHERE ClientId IN (SELECT * FROM Clients)", .querySyntax,
             "the subquery after IN must select one column, not 3", "line 1, column 37"),
            ("SELECT ClientId, ClientId FROM Orders", .querySyntax, "two columns are called 'ClientId'; name one with AS", "line 1, column 18"),
        ]
        for (text, code, message, location) in cases {
            let error = failure(text)
            #expect(error?.code == code, "\(text)")
            #expect(error?.message == message, "\(text)")
            #expect(error?.location == location, "\(text)")
        }
    }
}

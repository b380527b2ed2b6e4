import Testing
@testable import Relata

/// DA SQL's grammar: what parses into which statement, and where a query that does not parse
/// goes wrong (line and column).
@Suite struct DASQLParserTests {
    @Test func aFullQueryParsesIntoItsClauses() throws {
        let query = try DASQLQuery("""
            SELECT DISTINCT c.ClientName AS Name, COUNT(*) Orders, SUM(d.Quantity * d.UnitPrice) AS Total
            FROM Clients AS c
            INNER JOIN Orders o ON o.ClientId = c.ClientId
            LEFT OUTER JOIN OrderDetails d ON d.OrderId = o.OrderId
            WHERE o.OrderDate >= :since AND c.Active = TRUE -- open accounts only
            GROUP BY c.ClientName
            HAVING COUNT(*) > 1 /* at least two */
            ORDER BY Total DESC, 1
            LIMIT 10 OFFSET :skip;
            """)
        let statement = query.statement
        #expect(statement.distinct)
        #expect(statement.columns.count == 3)
        guard case .expression(.qualifiedField("c", "ClientName", _), "Name", _) = statement.columns[0] else {
            Issue.record("\(statement.columns[0])")
            return
        }
        guard case .expression(.aggregate(.count, nil, false, _), "Orders", _) = statement.columns[1] else {
            Issue.record("\(statement.columns[1])")
            return
        }
        #expect(statement.from.name == "Clients" && statement.from.alias == "c")
        #expect(statement.joins.map(\.kind) == [.inner, .left])
        #expect(statement.joins.map(\.table.scopeName) == ["o", "d"])
        #expect(statement.groupBy.count == 1 && statement.having != nil)
        #expect(statement.orderBy.map(\.descending) == [true, false])
        #expect(statement.orderBy[1].expression == .literal(.integer(1)))
        #expect(statement.limit == .literal(.integer(10)))
        #expect(query.parameterNames == ["since", "skip"])
        #expect(query.tableNames == ["Clients", "Orders", "OrderDetails"])
    }

    @Test func selectListsTakeStarsAndQualifiedStars() throws {
        let all = try DASQLQuery("SELECT * FROM Clients").statement
        guard case .all(nil, _) = all.columns[0] else { Issue.record("\(all.columns)"); return }
        let qualified = try DASQLQuery("select o.*, c.ClientName from Orders o join Clients c on c.ClientId = o.ClientId").statement
        guard case .all("o", _) = qualified.columns[0] else { Issue.record("\(qualified.columns)"); return }
        #expect(qualified.joins.count == 1, "keywords in any case")
    }

    @Test func subqueriesFollowInAndExists() throws {
        let query = try DASQLQuery("""
            SELECT ClientName FROM Clients c
            WHERE ClientId IN (SELECT ClientId FROM Orders WHERE Total > :big)
              AND NOT EXISTS (SELECT * FROM Orders x WHERE x.ClientId = c.ClientId AND x.Status = 'void')
            """)
        #expect(query.tableNames == ["Clients", "Orders"])
        #expect(query.parameterNames == ["big"])
        #expect(query.statement.subqueries.count == 2)
        let scalar = relataError { _ = try DASQLQuery("SELECT (SELECT 1 FROM Orders) FROM Clients") }
        #expect(scalar?.message == "a subquery can follow IN or EXISTS only")
        #expect(scalar?.location == "line 1, column 9")
    }

    @Test func quotedNamesMayBeKeywordsAndHoldSpaces() throws {
        let query = try DASQLQuery(#"SELECT "Order"."Group", [Unit Price] FROM "Order" WHERE "Order"."Desc" IS NULL"#)
        guard case .expression(.qualifiedField("Order", "Group", _), nil, _) = query.statement.columns[0] else {
            Issue.record("\(query.statement.columns)")
            return
        }
        #expect(query.statement.from.name == "Order")
    }

    @Test func syntaxErrorsGiveTheLineAndColumn() {
        func failure(_ text: String) -> RelataError? { relataError { _ = try DASQLQuery(text) } }
        let cases: [(String, String, String)] = [
            ("", "the query is empty", "line 1, column 1"),
            ("DELETE FROM Clients", "a DA SQL query starts with SELECT, not 'DELETE'", "line 1, column 1"),
            ("SELECT ClientName Clients", "expected FROM after the select list, found the end of the query", "line 1, column 26"),
            ("SELECT *\nFROM Clients\nWHERE ClientId = (1", "expected ')' after the expression in parentheses, found the end of the query", "line 3, column 20"),
            ("SELECT * FROM Clients; DROP TABLE Clients", "DA SQL runs one statement: nothing may follow ';'", "line 1, column 24"),
            ("SELECT * FROM Clients UNION SELECT * FROM Orders", "UNION is not part of DA SQL; run the queries one by one", "line 1, column 23"),
            ("SELECT * FROM Clients, Orders", "join tables with JOIN … ON …, not a comma", "line 1, column 22"),
            ("SELECT * FROM Clients c JOIN Orders o", "expected ON and a condition after JOIN Orders, found the end of the query", "line 1, column 38"),
            ("SELECT * FROM Clients RIGHT JOIN Orders ON 1 = 1", "RIGHT joins are not part of DA SQL (INNER and LEFT are)", "line 1, column 23"),
            ("SELECT SUM(*) FROM Orders", "SUM(*) is not SQL; name a field", "line 1, column 8"),
            ("SELECT COUNT(a, b) FROM Orders", "COUNT takes one argument", "line 1, column 15"),
            ("SELECT * FROM main.Clients", "a table is named by its schema name alone (no 'main.' before it)", "line 1, column 19"),
            ("SELECT c. FROM Clients c", "expected a field name after 'c.', found 'FROM'", "line 1, column 11"),
            ("SELECT * FROM Clients WHERE a.* = 1", "a.* belongs in the select list only", "line 1, column 31"),
            ("SELECT * FROM Clients /* never closed", "the comment that starts here is not closed (add */)", "line 1, column 23"),
            ("SELECT * FROM Clients ORDER Name", "expected BY after ORDER, found 'Name'", "line 1, column 29"),
            ("SELECT * FROM FROM", "expected a table name, found 'FROM'", "line 1, column 15"),
            ("SELECT * FROM Clients AS", "expected a name after AS, found the end of the query", "line 1, column 25"),
        ]
        for (text, message, location) in cases {
            let error = failure(text)
            #expect(error?.code == .querySyntax, "\(text)")
            #expect(error?.message == message, "\(text)")
            #expect(error?.location == location, "\(text)")
        }
    }

    @Test func aTrailingSemicolonAndCommentsAreFine() throws {
        #expect(try DASQLQuery("SELECT * FROM Clients -- all of them\n;").statement.from.name == "Clients")
        // In a where expression `--` is still two minus signs: comments belong to DA SQL.
        #expect(try Expression("ClientId = --1").parameterNames.isEmpty)
    }

    @Test func queryTermsAreRefusedInWhereExpressions() throws {
        #expect(relataError { _ = try Expression("c.ClientId = 1") }?.code == .expressionSyntax)
        let clients = try makeClients()
        let aggregate = relataError { _ = try clients.rows(where: "COUNT(ClientId) > 1") }
        #expect(aggregate?.code == .expressionSyntax, "COUNT is an unknown function in a where expression")
    }

    @Test func deepNestingIsRefusedNotOverflowed() {
        let deep = "SELECT * FROM T WHERE " + String(repeating: "(", count: 500) + "1" + String(repeating: ")", count: 500)
        #expect(relataError { _ = try DASQLQuery(deep) }?.code == .querySyntax)
        let subqueries = "SELECT * FROM T WHERE " + String(repeating: "A IN (SELECT A FROM T WHERE ", count: 100) + "1 = 1" + String(repeating: ")", count: 100)
        #expect(relataError { _ = try DASQLQuery(subqueries) }?.code == .querySyntax)
        // Depth adds up across subqueries: 40 of them, each the deepest leaf of a chain of 10 ANDs, is too deep.
        var condition = "1 = 1"
        for _ in 0..<40 { condition = "A IN (SELECT A FROM T WHERE \(condition))" + String(repeating: " AND A = 1", count: 10) }
        let deepChains = "SELECT * FROM T WHERE " + condition
        let error = relataError { _ = try DASQLQuery(deepChains) }
        #expect(error?.message.contains("nests more than 256 levels deep") == true, "\(String(describing: error))")
    }
}

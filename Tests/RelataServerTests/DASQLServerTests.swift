import Foundation
import Relata
import RelataScript
@testable import RelataServer
import RelataServerTestSupport
import RelataTestSupport
import Testing

/// DA SQL on the data server: `SQLGetData` and `GetData` with a query, over a socket;
/// refusals that name what was refused; the caller's permissions; and an injection corpus
/// that is refused or harmless on both backends.
@Suite(.timeLimit(.minutes(10))) struct DASQLServerTests {
    static let totals = """
        SELECT c.Name, COUNT(*) AS Lines, SUM(d.Quantity) AS Items, MAX(d.UnitPrice) AS Dearest
        FROM Clients c JOIN Orders o ON o.ClientId = c.ClientId
        JOIN OrderDetails d ON d.OrderId = o.OrderId
        WHERE d.Quantity >= :least
        GROUP BY c.Name ORDER BY Items DESC
        """

    @Test(arguments: StorageBackend.allCases)
    func sqlGetDataAnswersOverTheWire(backend: StorageBackend) async throws {
        let server = try HTTPProtocolTests.Server(backend: backend)
        try await server.test { client in
            let token = try #require(try await HTTPProtocolTests.login(client))
            let (status, data) = try await HTTPProtocolTests.post(client, "/v2/DataService/SQLGetData",
                                                                  ProtocolMessages.SQLGetDataRequest(sql: Self.totals, parameters: ["least": 2], name: "Totals"),
                                                                  token: token)
            #expect(status == 200, "\(String(decoding: data, as: UTF8.self))")
            let table = try JSONDecoder().decode(ProtocolMessages.GetDataAnswer.self, from: data).tables[0]
            #expect(table.name == "Totals")
            #expect(table.fields.map(\.name) == ["Name", "Lines", "Items", "Dearest"])
            #expect(table.fields.map(\.readOnly) == [false, true, true, true], "computed columns are read-only")
            #expect(table.rows == [["Globex", 1, 5, .decimal(Decimal(string: "9.99")!)], ["Acme", 1, 2, .decimal(Decimal(string: "9.99")!)]])

            // GetData takes queries beside tables, in one request.
            let both = ProtocolMessages.GetDataRequest(requests: [
                DataRequest(table: "Clients", fields: ["Name"]),
                DataRequest(table: "Open", sql: "SELECT OrderId FROM Orders WHERE Status = :s ORDER BY 1", parameters: ["s": "open"], maxRecords: 1),
            ])
            let (bothStatus, bothData) = try await HTTPProtocolTests.post(client, "/v2/DataService/GetData", both, token: token)
            #expect(bothStatus == 200)
            let tables = try JSONDecoder().decode(ProtocolMessages.GetDataAnswer.self, from: bothData).tables
            #expect(tables.map(\.name) == ["Clients", "Open"])
            #expect(tables[1].rows == [[10]], "maxRecords caps a query's answer too")
        }
    }

    @Test func refusalsNameWhatWasRefusedAndWhere() async throws {
        let server = try HTTPProtocolTests.Server()
        try await server.test { client in
            let token = try #require(try await HTTPProtocolTests.login(client))
            func refusal(_ sql: String, parameters: [String: Value]? = nil) async throws -> (Int, ProtocolMessages.ErrorAnswer.Details) {
                let (status, data) = try await HTTPProtocolTests.post(client, "/v2/DataService/SQLGetData",
                                                                      ProtocolMessages.SQLGetDataRequest(sql: sql, parameters: parameters), token: token)
                return (status, try HTTPProtocolTests.error(data))
            }
            let syntax = try await refusal("SELECT Name\nFROM Clients WHERE")
            #expect(syntax.0 == 400)
            #expect(syntax.1.code == "querySyntax")
            #expect(syntax.1.location == "line 2, column 19")
            let field = try await refusal("SELECT Nmae FROM Clients")
            #expect(field.1.code == "unknownField")
            #expect(field.1.message.contains("did you mean Name?"))
            let table = try await refusal("SELECT * FROM Client")
            #expect(table.1.code == "unknownTable")
            #expect(table.1.message == "no table 'Client' (did you mean Clients?)")
            let parameter = try await refusal("SELECT * FROM Clients WHERE ClientId = :id")
            #expect(parameter.1.message.contains("no value was given for parameter :id"))
            let both = try await HTTPProtocolTests.post(client, "/v2/DataService/GetData", ProtocolMessages.GetDataRequest(requests: [
                { var request = DataRequest(table: "Q", sql: "SELECT * FROM Clients"); request.where = "Name = 'x'"; return request }(),
            ]), token: token)
            #expect(both.0 == 400)
            #expect(try HTTPProtocolTests.error(both.1).message.contains("a DA SQL request takes no field list or where expression"))
        }
    }

    /// A query reads only what the caller may read — in joins and subqueries too.
    @Test(arguments: StorageBackend.allCases)
    func aQueryReadsOnlyWhatTheCallerMayRead(backend: StorageBackend) async throws {
        let database = try DataServiceTests.Database(backend: backend)
        let permissions = try TablePermissions(["Clients": ["read": ["Sales"]], "Orders": ["read": ["Manager"]]])
        let service = try DataService(storage: database.service.storage, permissions: permissions, runtimes: 1)
        let sales = Session(values: ["User": "ann"], roles: ["Sales"])
        let clients = try await service.getData([DataRequest(sql: "SELECT Name FROM Clients ORDER BY 1")], session: sales)
        #expect(clients[0].rows == [["Acme"], ["Globex"]])
        for sql in ["SELECT Name FROM Clients c JOIN Orders o ON o.ClientId = c.ClientId",
                    "SELECT Name FROM Clients WHERE ClientId IN (SELECT ClientId FROM Orders)",
                    "SELECT Name FROM Clients c WHERE EXISTS (SELECT 1 FROM Orders o WHERE o.ClientId = c.ClientId)"] {
            do {
                _ = try await service.getData([DataRequest(sql: sql)], session: sales)
                Issue.record("read Orders without the permission: \(sql)")
            } catch let error as RelataError {
                #expect(error.code == .permissionDenied, "\(sql)")
                #expect(error.table == "Orders")
                #expect(error.message.contains("read"))
            }
        }
        let manager = Session(values: ["User": "max"], roles: ["Sales", "Manager"])
        let joined = try await service.getData([DataRequest(sql: "SELECT COUNT(*) AS N FROM Clients c JOIN Orders o ON o.ClientId = c.ClientId")], session: manager)
        #expect(joined[0].rows == [[2]])
    }

    /// Comment tricks, stacked statements, quoting, Unicode look-alikes, ATTACH, PRAGMA,
    /// functions with side effects and the server's own tables: each is refused with a clear
    /// error, or is a harmless query over published tables — and the database is unchanged.
    @Test(arguments: StorageBackend.allCases)
    func anInjectionCorpusIsRefusedOrHarmless(backend: StorageBackend) async throws {
        let database = try DataServiceTests.Database(backend: backend)
        let service = database.service
        let before = try ["Clients", "Orders", "OrderDetails"].map { try service.storedRows(of: $0) }
        let refused: [String] = [
            "SELECT * FROM Clients; DROP TABLE Clients",
            "SELECT * FROM Clients;; DROP TABLE Clients",
            "SELECT * FROM Clients /* */; DELETE FROM Clients",
            "SELECT * FROM Clients LIMIT 1; SELECT * FROM Orders",
            "DROP TABLE Clients", "DELETE FROM Clients", "UPDATE Clients SET Name = 'x'", "INSERT INTO Clients (Name) VALUES ('x')",
            "CREATE TABLE x (a INTEGER)", "WITH x AS (SELECT 1) SELECT * FROM x", "ATTACH DATABASE '/tmp/evil.sqlite' AS evil",
            "PRAGMA table_info(Clients)", "PRAGMA writable_schema = ON", "VACUUM", "BEGIN", "COMMIT", "SET ROLE postgres",
            "COPY Clients TO '/tmp/out'", "SELECT * FROM Clients UNION SELECT * FROM Orders",
            "SELECT load_extension('/tmp/evil.so') FROM Clients", "SELECT pg_sleep(10) FROM Clients",
            "SELECT pg_read_file('/etc/passwd') FROM Clients", "SELECT lo_import('/etc/passwd') FROM Clients",
            "SELECT sqlite_version()", "SELECT randomblob(1000000000) FROM Clients", "SELECT CHAR(39) FROM Clients",
            "SELECT * FROM sqlite_master", "SELECT * FROM sqlite_schema", "SELECT * FROM pg_catalog.pg_tables", "SELECT * FROM pg_user",
            "SELECT * FROM information_schema.tables", "SELECT * FROM relata_sessions", "SELECT * FROM relata_login_failures",
            "SELECT * FROM main.Clients", "SELECT * FROM public.\"Clients\"", "SELECT * FROM \"Clients\"\"; DROP TABLE Clients; --\"",
            "SELECT Name FROM Clients WHERE Name = $$x$$",
            "SELECT Name FROM Clients WHERE Name = E'\\x27'", "SELECT Name FROM Clients WHERE Name = 'unterminated",
            "SELECT * FROM Cliеnts",                       // a Cyrillic 'е'
            "SELECT * FROM Clients WHERE ClientId ＝ 1",     // a fullwidth '='
            "SELECT＊FROM Clients",                          // a fullwidth '*'
            "SELECT * FROM Clients\u{0}; DROP TABLE Clients",
            "SELECT * FROM Clients WHERE Name = 'a'\u{037E} DROP TABLE Clients",   // a Greek question mark, like ';'
            "SELECT Name FROM Clients c JOIN relata_sessions s ON 1 = 1",
            "SELECT Name FROM Clients WHERE ClientId IN (SELECT token_digest FROM relata_sessions)",
            String(repeating: "(", count: 5_000) + "1" + String(repeating: ")", count: 5_000),
            "SELECT * FROM Clients WHERE " + String(repeating: "NOT ", count: 5_000) + "TRUE",
        ]
        for sql in refused {
            do {
                let answer = try await service.getData([DataRequest(sql: sql)], session: Session())
                Issue.record("\(backend): not refused: \(sql) → \(answer[0].rows)")
            } catch let error as RelataError {
                #expect([.querySyntax, .unknownTable, .unknownField, .expressionSyntax].contains(error.code), "\(sql): \(error)")
                #expect(error.location != nil || error.table != nil || error.field != nil, "\(sql): the error says where: \(error)")
            }
        }
        // Harmless: what looks like SQL inside a string or a parameter is a value, and a comment is a comment.
        let harmless: [(String, [String: Value], Int)] = [
            ("SELECT Name FROM Clients WHERE Name = 'x'' OR 1=1 --'", [:], 0),
            ("SELECT Name FROM Clients WHERE Name = :name", ["name": "' OR '1'='1"], 0),
            ("SELECT Name FROM Clients WHERE Name = :name", ["name": "Acme'; DROP TABLE Clients; --"], 0),
            ("SELECT Name FROM Clients WHERE Name = :name", ["name": "\\'; DROP TABLE Clients; --"], 0),
            ("SELECT Name FROM Clients -- ; DROP TABLE Clients", [:], 2),
            ("SELECT * FROM Clients; -- DROP TABLE Clients", [:], 2),
            // The query's own condition, read as written: a reader may read every client anyway.
            ("SELECT \"Name\" FROM Clients WHERE Name = 'x' OR 1=1 --'", [:], 2),
            ("SELECT Name /* ; DROP TABLE Clients */ FROM Clients", [:], 2),
            ("SELECT \"Name\" FROM \"Clients\" WHERE [Name] = 'Acme'", [:], 1),
            ("SELECT Name || ''';DROP TABLE Clients;--' AS Label FROM Clients", [:], 2),
            ("SELECT Name FROM Clients WHERE Name LIKE '%'' OR ''1''=''1'", [:], 0),
            ("SELECT COUNT(*) AS N FROM Clients WHERE Name = :name", ["name": "Acme\u{0}; DROP TABLE Clients"], 0),
        ]
        for (sql, parameters, count) in harmless {
            let answer = try await service.getData([DataRequest(sql: sql, parameters: parameters)], session: Session())
            let rows = sql.contains("COUNT(*)") ? Int(answer[0].rows[0][0].integerValue ?? -1) : answer[0].rows.count
            #expect(rows == count, "\(backend): \(sql)")
        }
        let after = try ["Clients", "Orders", "OrderDetails"].map { try service.storedRows(of: $0) }
        #expect(after == before, "the database is unchanged")
        #expect(!FileManager.default.fileExists(atPath: "/tmp/evil.sqlite"))
    }

    /// `lda.sql` in a rule reads the same offline and on the server, so the verdict is the same.
    @Test(arguments: StorageBackend.allCases)
    func ldaSQLInARuleGivesTheSameVerdictOfflineAndOnTheServer(backend: StorageBackend) async throws {
        var schema = try DataServiceTests.schema()
        let index = try #require(schema.tables.firstIndex { $0.name == "Clients" })
        schema.tables[index].script = RuleScript("""
            function beforeUpdate(row, old) {
                if (row.CreditLimit < old.CreditLimit) {
                    const [open] = lda.sql("SELECT COUNT(*) AS N, MAX(o.OrderId) AS Last FROM Orders o " +
                                           "WHERE o.ClientId = :id AND o.Status = 'open'", { id: row.ClientId });
                    if (open.N > 0) fail(row.Name + ' has ' + open.N + ' open order(s), the last ' + open.Last + '; its credit limit cannot go down');
                }
            }
            """, fileName: "Clients.js")
        let expected = "Acme has 1 open order(s), the last 10; its credit limit cannot go down"

        // Offline: the rule runs as the row is changed.
        let offline = try LocalDataAdapter()
        let (clients, orders, details) = try DataServiceTests.clientTables()
        try offline.load(schema, tables: [clients, orders, details])
        do {
            try clients.rows[0].setValue(500, forKey: "CreditLimit")
            Issue.record("the rule did not refuse offline")
        } catch let error as ScriptError {
            #expect(error.message == expected)
        }
        try clients.rows[1].setValue(5000, forKey: "CreditLimit")

        // On the server: a client that skipped the rules sends both changes; the server refuses the same one.
        let database = try DataServiceTests.Database(schema: schema, backend: backend)
        let (bare, _, _) = try DataServiceTests.clientTables()
        try bare.rows[0].setValue(500, forKey: "CreditLimit")
        try bare.rows[1].setValue(5000, forKey: "CreditLimit")
        let processed = try await database.service.updateData([bare.makeDelta()], session: Session())
        #expect(processed[0].changes.map(\.status) == [.failed, .resolved])
        #expect(processed[0].changes[0].failure?.message == expected)
    }

    /// A query that would run for hours is stopped at the server's time limit with a clear
    /// error, and the server goes on answering.
    @Test(arguments: StorageBackend.allCases)
    func aQueryThatRunsTooLongIsStopped(backend: StorageBackend) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("relata-slow-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let (database, cleanup) = try backend.makeDatabase(in: folder)
        defer {
            cleanup()
            try? FileManager.default.removeItem(at: folder)
        }
        let numbers = try DataTable(name: "Numbers", fields: [FieldDefinition("N", .integer, primaryKey: true)])
        try numbers.loadRows((0..<2_000).map { [.integer(Int64($0))] })
        let storage = try SQLStorage(database: database, schema: SchemaDefinition(name: "Big", tables: [
            TableDefinition(name: "Numbers", fields: numbers.fields),
        ]))
        _ = try storage.seedIfEmpty(with: [numbers])
        let service = try DataService(storage: storage, runtimes: 1, queryTimeLimit: .milliseconds(300))
        // Sixteen trillion rows: hours in either database.
        let slow = "SELECT COUNT(*) AS N FROM Numbers a JOIN Numbers b ON a.N <> b.N JOIN Numbers c ON b.N <> c.N JOIN Numbers d ON c.N <> d.N"
        let started = ContinuousClock.now
        do {
            _ = try await service.getData([DataRequest(sql: slow)], session: Session())
            Issue.record("sixteen trillion rows were counted")
        } catch let error as RelataError {
            #expect(error.code == .timeLimitExceeded, "\(error)")
            #expect(error.message.contains("was stopped"))
        }
        // Stopped at 0.3 s; the bound leaves room for a test run that keeps every core busy.
        #expect(ContinuousClock.now - started < .seconds(60))
        let quick = try await service.getData([DataRequest(sql: "SELECT COUNT(*) AS N FROM Numbers")], session: Session())
        #expect(quick[0].rows == [[2_000]], "the server goes on answering")
    }

    /// A query the in-memory engine answers (string functions are not compiled) is bounded by
    /// the same time limit — correlated subqueries included — and stops when its client goes.
    @Test(.timeLimit(.minutes(3)), arguments: StorageBackend.allCases)
    func anEngineQueryThatRunsTooLongOrLosesItsClientIsStopped(backend: StorageBackend) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("relata-slow-engine-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let (database, cleanup) = try backend.makeDatabase(in: folder)
        defer {
            cleanup()
            try? FileManager.default.removeItem(at: folder)
        }
        let numbers = try DataTable(name: "Numbers", fields: [FieldDefinition("N", .integer, primaryKey: true), FieldDefinition("Name", .string, size: 20)])
        try numbers.loadRows((0..<3_000).map { [.integer(Int64($0)), .string("n\($0)")] })
        let storage = try SQLStorage(database: database, schema: SchemaDefinition(name: "Big", tables: [
            TableDefinition(name: "Numbers", fields: numbers.fields),
        ]))
        _ = try storage.seedIfEmpty(with: [numbers])
        let service = try DataService(storage: storage, runtimes: 1, queryTimeLimit: .milliseconds(500))
        // Nine million correlated subquery rows per outer row, none of them SQL's: hours in the engine.
        let slow = """
            SELECT COUNT(*) AS N FROM Numbers a WHERE EXISTS (
                SELECT b.N FROM Numbers b WHERE UPPER(b.Name) <> LOWER(a.Name) AND EXISTS (
                    SELECT c.N FROM Numbers c WHERE UPPER(c.Name) = UPPER(b.Name) AND c.N = a.N + b.N + 100000))
            """
        let started = ContinuousClock.now
        do {
            _ = try await service.getData([DataRequest(sql: slow)], session: Session())
            Issue.record("the engine ran the query to its end")
        } catch let error as RelataError {
            #expect(error.code == .timeLimitExceeded, "\(error)")
            #expect(error.message.contains("was stopped"))
        }
        #expect(ContinuousClock.now - started < .seconds(120), "stopped at 0.5 s, not after hours (room left for a busy machine)")

        // No time limit, but the client goes after 0.3 s: the work stops too.
        let patient = try DataService(storage: storage, runtimes: 1, queryTimeLimit: .seconds(3600))
        let read = try await patient.checkRead([DataRequest(sql: slow)], session: Session())
        let limit = WorkLimit(timeLimit: nil)
        let cancelling = Task {
            try await Task.sleep(for: .milliseconds(300))
            limit.cancel()
        }
        let cancelledAt = ContinuousClock.now
        await #expect(throws: CancellationError.self) { try await patient.stream(read, limit: limit) { _ in } }
        #expect(ContinuousClock.now - cancelledAt < .seconds(120), "stopped soon after the cancel, not after hours")
        cancelling.cancel()
    }

    /// A query the engine answers on the server reads only the rows its first conditions keep,
    /// when those compile exactly; a table a subquery reads too is read whole.
    @Test(arguments: StorageBackend.allCases)
    func theEngineReadsOnlyTheRowsItsFirstConditionsKeep(backend: StorageBackend) async throws {
        let database = try DataServiceTests.Database(backend: backend)
        let storage = database.service.storage
        func loaded(_ sql: String, _ parameters: [String: Value] = [:]) throws -> [String: Int] {
            let query = try DASQLQuery(sql)
            let resolved = try query.resolved(in: QueryCatalog(schema: storage.schema), parameters: parameters)
            var compiler = SQLQueryCompiler(storage: storage, parameters: parameters)
            #expect(throws: SQLQueryCompiler.NotExact.self, "answered by the engine") { try compiler.compile(resolved) }
            let tables = try storage.read { connection in
                try QueryReader(storage: storage).tablesForTheEngine(query: query, resolved: resolved, parameters: parameters, in: connection)
            }
            return Dictionary(uniqueKeysWithValues: tables.map { ($0.name, $0.rowCount) })
        }
        #expect(try loaded("SELECT Name FROM Clients WHERE ClientId = :id AND UPPER(Name) = 'ACME'", ["id": 1]) == ["Clients": 1])
        #expect(try loaded("SELECT o.OrderId, c.Name FROM Orders o JOIN Clients c ON c.ClientId = o.ClientId WHERE o.OrderId = 11 AND UPPER(c.Name) = 'ACME'")
                == ["Orders": 1, "Clients": 2], "only Orders' first condition compiles and moves")
        #expect(try loaded("SELECT Name FROM Clients c WHERE c.ClientId = 2 AND EXISTS (SELECT 1 FROM Clients d WHERE UPPER(d.Name) = 'ACME')")
                == ["Clients": 2], "read by a subquery too: whole")
        let answer = try await database.service.getData([DataRequest(sql: "SELECT Name FROM Clients WHERE ClientId = :id AND UPPER(Name) = 'ACME'",
                                                                      parameters: ["id": 1])], session: Session())
        #expect(answer[0].rows == [["Acme"]])
    }
}

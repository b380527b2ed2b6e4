import Foundation
import Relata
@testable import RelataServer
import RelataServerTestSupport
import RelataTools
import Testing

/// DA SQL's promise: a query gives the same rows in memory (offline, in rules) as on a data
/// server over SQLite or PostgreSQL — whether the server compiled it to SQL or answered it
/// with the engine. Hundreds of generated queries over random tables, and hand-written ones
/// over PCTrade, are run on each and compared row for row (in order where ORDER BY defines
/// one); a difference prints the query and both answers.
@Suite(.timeLimit(.minutes(10))) struct DASQLDifferentialTests {
    @Test(arguments: StorageBackend.allCases)
    func generatedQueriesOverRandomTables(backend: StorageBackend) async throws {
        let tables = try DASQLCorpus.tables(seed: 14)
        let server = try QueryServer(schema: DASQLCorpus.schema, data: tables, backend: backend)
        let report = try await server.compare(DASQLCorpus.queries(count: 500, seed: 2026), over: tables)
        #expect(report.differences.isEmpty, "\(report.differences.count) of 500 queries differ on \(backend):\n\(report.differences.joined(separator: "\n"))")
        // Both of the server's ways of answering are exercised, and most queries do answer.
        #expect(report.compiled >= 150, "compiled to SQL: \(report.compiled)")
        #expect(report.engine >= 50, "answered by the engine: \(report.engine)")
        #expect(report.failed <= 150, "failed on every site: \(report.failed)")
        print("DA SQL differential (\(backend)): \(report.compiled) compiled, \(report.engine) by the engine, \(report.failed) refused alike")
    }

    @Test(arguments: StorageBackend.allCases)
    func handWrittenQueriesOverPCTrade(backend: StorageBackend) async throws {
        let schemaFile = try Schema(contentsOf: PCTradeServer.schemaFile)
        let tables = try schemaFile.dataTables()
        let server = try QueryServer(schema: try schemaFile.definition(), data: tables, backend: backend)
        let queries: [DASQLCorpus.Query] = [
            .init(text: "SELECT * FROM Clients"),
            .init(text: "SELECT ClientName, CreditLimit FROM Clients WHERE Active AND CreditLimit >= :min ORDER BY 2 DESC, 1", parameters: ["min": 1000], ordered: true),
            .init(text: "SELECT c.ClientName, COUNT(*) AS Orders FROM Clients c JOIN Orders o ON o.ClientId = c.ClientId GROUP BY c.ClientName"),
            .init(text: "SELECT c.ClientName, COUNT(o.OrderId) AS Orders FROM Clients c LEFT JOIN Orders o ON o.ClientId = c.ClientId GROUP BY c.ClientName ORDER BY 2 DESC, 1", ordered: true),
            .init(text: "SELECT o.OrderId, SUM(d.Quantity) AS Items, SUM(d.Quantity * d.UnitPrice) AS Total FROM Orders o JOIN OrderDetails d ON d.OrderId = o.OrderId GROUP BY o.OrderId"),
            .init(text: "SELECT p.Category, COUNT(*) AS N, AVG(p.UnitsInStock) AS Stock, MIN(p.UnitPrice) AS Cheapest, MAX(p.ProductName) AS Last FROM Products p GROUP BY p.Category HAVING COUNT(*) > 1"),
            .init(text: "SELECT ProductName FROM Products WHERE ProductId NOT IN (SELECT ProductId FROM OrderDetails)"),
            .init(text: "SELECT ClientName FROM Clients c WHERE EXISTS (SELECT 1 FROM Orders o WHERE o.ClientId = c.ClientId AND o.Status = 'open')"),
            .init(text: "SELECT DISTINCT Status FROM Orders ORDER BY Status", ordered: true),
            .init(text: "SELECT OrderId, OrderDate FROM Orders WHERE OrderDate >= '2024-01-01' AND YEAR(OrderDate) = 2024 ORDER BY OrderDate, OrderId LIMIT 5", ordered: true),
            .init(text: "SELECT ProductName, UnitPrice FROM Products WHERE UnitPrice BETWEEN 10 AND 100 AND NOT Discontinued ORDER BY UnitPrice DESC, ProductName LIMIT 3 OFFSET 1", ordered: true),
            .init(text: "SELECT pr.Country, COUNT(DISTINCT p.Category) AS Categories FROM Providers pr LEFT JOIN Products p ON p.ProviderId = pr.ProviderId GROUP BY pr.Country"),
            .init(text: "SELECT ClientName FROM Clients WHERE ClientName LIKE '%a%' AND UPPER(ClientName) <> ClientName"),
            .init(text: "SELECT d.OrderId, d.Quantity / 2 AS Half, d.Quantity % 3 AS Rest FROM OrderDetails d WHERE d.Discount > 0"),
            .init(text: "SELECT COUNT(*), SUM(Quantity), AVG(Discount) FROM OrderDetails WHERE OrderId = -1"),
            .init(text: "SELECT Status, COUNT(*) FROM Orders GROUP BY Status HAVING MIN(OrderDate) < '2030-01-01' ORDER BY 1", ordered: true),
            .init(text: "SELECT o.OrderId FROM Orders o WHERE o.ClientId IN (SELECT ClientId FROM Clients WHERE CreditLimit > 5000) AND o.ShipAddress IS NOT NULL"),
            .init(text: "SELECT ClientName || ' (' || ContactPhone || ')' AS Label FROM Clients WHERE ContactPhone IS NOT NULL ORDER BY 1", ordered: true),
        ]
        let report = try await server.compare(queries, over: tables)
        #expect(report.differences.isEmpty, "\(report.differences.joined(separator: "\n"))")
        #expect(report.failed == 0)
        #expect(report.compiled >= 8, "compiled to SQL: \(report.compiled)")
    }
}

/// A data service over a schema and its rows, and the comparison of its DA SQL answers with the engine's.
final class QueryServer {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("relata-dasql-\(UUID().uuidString)")
    let storage: SQLStorage
    let service: DataService
    private let cleanup: @Sendable () -> Void

    init(schema: SchemaDefinition, data: [DataTable], backend: StorageBackend) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let (database, cleanup) = try backend.makeDatabase(in: folder)
        self.cleanup = cleanup
        storage = try SQLStorage(database: database, schema: schema)
        _ = try storage.seedIfEmpty(with: data)
        service = try DataService(storage: storage, runtimes: 1)
    }

    deinit {
        cleanup()
        try? FileManager.default.removeItem(at: folder)
    }

    struct Report {
        var differences: [String] = []
        var compiled = 0, engine = 0, failed = 0
    }

    func compare(_ queries: [DASQLCorpus.Query], over tables: [DataTable]) async throws -> Report {
        var report = Report()
        for query in queries {
            let offline: Result<[String], RelataError>
            do {
                let answer = try DataTable(query: DASQLQuery(query.text), parameters: query.parameters, over: tables)
                offline = .success(DASQLCorpus.canonical(answer.rows.map { row in answer.fields.map { row[$0.name] } }, ordered: query.ordered))
            } catch let error as RelataError {
                offline = .failure(error)
            }
            let served: Result<[String], RelataError>
            do {
                let answer = try await service.getData([DataRequest(table: "Q", sql: query.text, parameters: query.parameters)], session: Session())
                served = .success(DASQLCorpus.canonical(answer[0].rows, ordered: query.ordered))
            } catch let error as RelataError {
                served = .failure(error)
            } catch {
                // Not a refusal of the query: the server failed (a database's error).
                report.differences.append("\(query)\n  the server failed: \(error)")
                continue
            }
            var compiler = SQLQueryCompiler(storage: storage, parameters: query.parameters)
            if let resolved = try? DASQLQuery(query.text).resolved(in: QueryCatalog(schema: storage.schema), parameters: query.parameters),
               (try? compiler.compile(resolved)) != nil {
                report.compiled += 1
            } else {
                report.engine += 1
            }
            switch (offline, served) {
            case let (.success(a), .success(b)) where a == b: break
            case (.failure, .failure): report.failed += 1
            default:
                func show(_ result: Result<[String], RelataError>) -> String {
                    switch result {
                    case .success(let rows): return rows.isEmpty ? "(no rows)" : rows.joined(separator: "\n      ")
                    case .failure(let error): return "error: \(error.message)"
                    }
                }
                report.differences.append("\(query)\n  in memory:\n      \(show(offline))\n  on the server:\n      \(show(served))")
            }
        }
        return report
    }
}

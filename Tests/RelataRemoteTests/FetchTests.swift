import Foundation
import Relata
import RelataRemote
import Testing

/// Fetching tables from a live server over loopback.
@Suite(.timeLimit(.minutes(10))) struct FetchTests {
    @Test func aTableArrivesWithTheServersRowsAndTheSchemasFields() async throws {
        let server = try PCTradeServer()
        try await server.serve { url in
            let adapter = demoAdapter(url)
            var reports: [FetchProgress] = []
            let clients = try await adapter.getDataTable("Clients") { reports.append($0) }
            let stored = try server.storedRows("Clients", key: "ClientId")
            #expect(clients.rowCount == stored.count && clients.rowCount > 0)
            for row in clients.rows {
                let id = try #require(row["ClientId"].integerValue)
                for field in clients.fields { #expect(row[field.name] == stored[id]?[field.name], "\(field.name) of client \(id)") }
            }
            #expect(adapter.table(named: "clients") === clients, "the adapter's own table")
            #expect(adapter.session?.roles == ["Sales", "Manager"])
            #expect(adapter.rulesVersion?.hasPrefix("sha256:") == true)
            #expect(reports.last?.rowsReceived == clients.rowCount)
            #expect(reports.last?.expectedRows == clients.rowCount)
            #expect(reports.last?.fractionCompleted == 1)
            #expect(clients.rows.allSatisfy { $0.rowState == .unchanged })
        }
    }

    /// A DA SQL answer is a table of its own, with the same rows the same query gives offline.
    @Test func aDASQLQueryArrivesAsATableOfItsOwn() async throws {
        let server = try PCTradeServer()
        try await server.serve { url in
            let adapter = demoAdapter(url)
            let sql = "SELECT o.ClientId, COUNT(*) AS Orders FROM Orders o WHERE o.Status = :status GROUP BY o.ClientId ORDER BY 2 DESC, 1"
            var reports: [FetchProgress] = []
            let answer = try await adapter.getDataTable(sql: sql, parameters: ["status": "open"], name: "OpenOrders") { reports.append($0) }
            #expect(answer.name == "OpenOrders")
            #expect(answer.fields.map(\.name) == ["ClientId", "Orders"])
            #expect(answer.fields.map(\.readOnly) == [false, true])
            #expect(adapter.table(named: "OpenOrders") == nil && adapter.table(named: "Orders")?.rowCount == 0, "not one of the adapter's tables")
            #expect(reports.last?.rowsReceived == answer.rowCount && answer.rowCount > 0)

            let orders = try await adapter.getDataTable("Orders")
            let offline = try DataTable(query: DASQLQuery(sql), parameters: ["status": "open"], over: [orders])
            #expect(answer.rows.map { [$0["ClientId"], $0["Orders"]] } == offline.rows.map { [$0["ClientId"], $0["Orders"]] })

            for (sql, code) in [("SELECT FROM Orders", RelataError.Code.querySyntax),
                                ("SELECT * FROM Orders WHERE Status = :status", .invalidArgument)] {
                do {
                    _ = try await adapter.getDataTable(sql: sql)
                    Issue.record("not refused on the client: \(sql)")
                } catch let error as RelataError {
                    #expect(error.code == code, "\(sql): \(error)")
                }
            }
        }
    }

    @Test func aWhereExpressionAFieldListAndSeveralTablesInOneRequest() async throws {
        let server = try PCTradeServer()
        try await server.serve { url in
            let adapter = demoAdapter(url)
            let orders = try await adapter.getDataTable("Orders", where: "ClientId = :client", parameters: ["client": 1])
            #expect(orders.rowCount > 0)
            #expect(orders.rows.allSatisfy { $0["ClientId"] == 1 })

            let parsed = try Relata.Expression("ClientId = :client AND Status <> 'cancelled'")
            let same = try await adapter.getDataTable("Orders", where: parsed, parameters: ["client": 1])
            #expect(same.rowCount > 0 && same.rows.allSatisfy { $0["ClientId"] == 1 })
            await #expect(throws: RelataError.self) { _ = try await adapter.getDataTable("Orders", where: parsed) }

            let names = try await adapter.getDataTable("Products", fields: ["ProductId", "ProductName"], maxRecords: 2)
            #expect(names.fields.map(\.name) == ["ProductId", "ProductName"])
            #expect(names.rowCount == 2)
            #expect(adapter.table(named: "Products") !== names, "a field list makes a table of its own")

            let tables = try await adapter.getDataTables([DataRequest(table: "Providers"), DataRequest(table: "Products")])
            #expect(tables.map(\.name) == ["Providers", "Products"])
            let products = tables[1]
            let provider = try tables[0].row(forPrimaryKey: products.rows[0]["ProviderId"])
            #expect(products.rows[0]["ProviderName"] == provider?["ProviderName"], "the schema's lookup field reads the fetched providers")
            #expect(!products.rows[0]["ProviderName"].isNull)
        }
    }

    @Test func aLookupFieldBringsTheTableItReadsTheFirstTime() async throws {
        let server = try PCTradeServer()
        try await server.serve { url in
            let adapter = demoAdapter(url)
            let details = try await adapter.getDataTables([DataRequest(table: "OrderDetails")])
            #expect(details.map(\.name) == ["OrderDetails"], "only the tables asked for are returned")
            let products = try #require(adapter.table(named: "Products"))
            #expect(products.rowCount == (try server.storedRows("Products", key: "ProductId").count))
            let detail = details[0].rows[0]
            #expect(detail["ProductName"] == (try products.row(forPrimaryKey: detail["ProductId"]))?["ProductName"])
            #expect(!detail["ProductName"].isNull)
            let product = products.rows[0]
            #expect(!product["ProviderName"].isNull, "Products' own lookup reads Providers, which came along too")
            #expect(adapter.table(named: "Orders")?.rowCount == 0, "a table no lookup reads stays unfetched")
        }
    }

    @Test func fetchingAgainRefreshesTheRowsAndAFailedFetchLeavesThem() async throws {
        let server = try PCTradeServer()
        try await server.serve { url in
            let adapter = demoAdapter(url)
            let all = try await adapter.getDataTable("Clients")
            let count = all.rowCount
            let one = try await adapter.getDataTable("Clients", where: "ClientId = 1")
            #expect(one === all)
            #expect(one.rowCount == 1)
            await #expect(throws: RemoteError.self) {
                _ = try await adapter.getDataTable("Clients", where: "NoSuchField = 1")
            }
            #expect(all.rowCount == 1, "a refused refresh leaves the rows")
            _ = try await adapter.getDataTable("Clients")
            #expect(all.rowCount == count)
        }
    }

    @Test func refusalsNameWhatWasRefused() async throws {
        let server = try PCTradeServer()
        try await server.serve { url in
            let adapter = demoAdapter(url)
            do {
                _ = try await adapter.getDataTable("Invoices")
                Issue.record("an unknown table was served")
            } catch let error as RemoteError {
                #expect(error.code == "unknownTable")
                #expect(error.kind == .permanent)
                #expect(error.status == 400)
                #expect(error.message.contains("Invoices"))
            }
        }
    }

    @Test func aServerThatIsNotThereIsATransientFailure() async throws {
        let adapter = demoAdapter(URL(string: "http://127.0.0.1:9")!)
        do {
            _ = try await adapter.getDataTable("Clients")
            Issue.record("a fetch from nowhere succeeded")
        } catch let error as RemoteError {
            #expect(error.kind == .transient)
            #expect(error.code == RemoteError.networkCode)
            #expect(error.isRetryable)
        }
    }
}

/// Fetching a table again while it has pending changes.
@Suite(.timeLimit(.minutes(10))) struct RefreshTests {
    @Test func pendingChangesSurviveARefreshAndARowChangedMeanwhileIsAConflict() async throws {
        let server = try PCTradeServer()
        try await server.serve { url in
            let mine = demoAdapter(url), theirs = demoAdapter(url)
            let clients = try await mine.getDataTable("Clients"), other = try await theirs.getDataTable("Clients")
            let first = clients.rows[0], third = clients.rows[2]
            try first.setValue(0.2, forKey: "ClientDiscount")
            try third.setValue(0.1, forKey: "ClientDiscount")
            try other.rows[0].setValue("Acme Worldwide", forKey: "ClientName")
            try other.rows[1].setValue("Globex Worldwide", forKey: "ClientName")
            try await theirs.applyChanges(for: other)

            let conflicts = try await mine.refresh(clients)
            #expect(conflicts.count == 1 && conflicts.first?.row === first)
            #expect(conflicts[0].fields == ["ClientName"])
            #expect(first["ClientDiscount"] == 0.2 && first.rowState == .modified, "the user's change stays")
            #expect(third["ClientDiscount"] == 0.1 && third.rowState == .modified && third.failureMessage == nil)
            #expect(try clients.row(forPrimaryKey: 2)?["ClientName"] == "Globex Worldwide", "unchanged rows are fresh")

            let delta = try await mine.applyChanges(for: clients)
            #expect(delta.changes.map(\.status) == [.failed, .resolved])
            #expect(delta.changes[0].failure?.kind == .conflict, "the conflict is not overwritten on the server either")
        }
    }
}

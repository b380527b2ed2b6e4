import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Relata
import RelataScript
@testable import RelataServer
import RelataServerTestSupport
import RelataTestSupport
import Testing

/// `GetData` answers stream: rows are read, filtered and encoded a batch at a time, in the
/// binary row stream or in JSON, and a slow or vanished client holds nothing up.
@Suite(.timeLimit(.minutes(10))) struct StreamedGetDataTests {
    /// The shop with a lookup field (Orders.ClientName), a calculated one (OrderDetails.LineTotal)
    /// and an `afterGetData` that refuses reading the audit log.
    static func server(_ backend: StorageBackend = .sqlite, readers: Int = 4) throws -> HTTPProtocolTests.Server {
        let shop = try DataServiceTests.schema()
        var tables = shop.tables
        tables[1].lookupFields = [LookupFieldDefinition(name: "ClientName", sourceField: "ClientId", lookupTable: "Clients",
                                                        lookupKeyField: "ClientId", lookupResultField: "Name")]
        tables[2].calculatedFields = [CalculatedFieldDefinition(name: "LineTotal", type: .float, function: "function (row) { return row.Quantity * row.UnitPrice; }")]
        let script = RuleScript("""
            function afterGetData(names, requests) {
                if (names.indexOf('AuditLog') >= 0) fail('the audit log is read elsewhere');
            }
            """, fileName: "schema.js")
        return try HTTPProtocolTests.Server(schema: SchemaDefinition(name: shop.name, tables: tables, script: script, updateOrder: shop.updateOrder),
                                            backend: backend, readers: readers)
    }

    static func getData(_ client: LiveClient, _ requests: [DataRequest], token: String, binary: Bool,
                        includeSchema: Bool = false) async throws -> LiveClient.Response {
        let body = try JSONEncoder().encode(ProtocolMessages.GetDataRequest(requests: requests, includeSchema: includeSchema))
        return try await client.request("/v2/DataService/GetData", body: body, token: token, accept: binary ? RowStream.contentType : nil)
    }

    @Test(arguments: StorageBackend.allCases)
    func binaryAndJSONAnswersCarryTheSameRows(backend: StorageBackend) async throws {
        let server = try Self.server(backend)
        let version = server.database.service.versionedSchema.version
        try await server.test { client in
            let token = try #require(try await HTTPProtocolTests.login(client))
            let requests = [
                DataRequest(table: "Clients"),
                DataRequest(table: "Orders", fields: ["OrderId", "Status"], where: "ClientName = :name", parameters: ["name": "Acme"]),
                DataRequest(table: "OrderDetails", where: "LineTotal > 20", maxRecords: 5),
                DataRequest(table: "Orders", fields: ["OrderId"], maxRecords: 1),
            ]
            let binary = try await Self.getData(client, requests, token: token, binary: true, includeSchema: true)
            #expect(binary.status == 200)
            #expect(binary.header("Content-Type") == RowStream.contentType)
            let streamed = try RowStreamTables(binary.body)
            let json = try await Self.getData(client, requests, token: token, binary: false, includeSchema: true)
            #expect(json.header("Content-Type")?.hasPrefix("application/json") == true)
            #expect(binary.header("Content-Length") == "\(binary.body.count)" && json.header("Content-Length") == "\(json.body.count)",
                    "small answers go out whole, with their length")
            let answer = try JSONDecoder().decode(ProtocolMessages.GetDataAnswer.self, from: json.body)
            #expect(try streamed.tables.map { try TableData($0) } == answer.tables)
            #expect(answer.tables.map(\.rows) == [
                [[1, "Acme", .decimal(1000)], [2, "Globex", .decimal(50)]],
                [[10, "open"]],
                [[101, 10, "Gadget", 1, .decimal(Decimal(string: "24.5")!)], [102, 11, "Widget", 5, .decimal(Decimal(string: "9.99")!)]],
                [[10]],
            ])
            #expect(answer.schema?.version == version)
            let schema = try JSONDecoder().decode(ProtocolMessages.SchemaAnswer.self, from: try #require(streamed.schemaJSON))
            #expect(schema.version == version)
        }
    }

    /// Adds `count` clients (ids from 1000) straight into the database, 500 rows a statement.
    static func addClients(_ count: Int, to service: DataService) async throws {
        // Seconds of blocking work: on a thread of its own, not one of the few the other tests share.
        try await OffCooperativePool.run { try service.storage.write { connection in
            try connection.begin()
            let dialect = connection.dialect
            let head = "INSERT INTO \(dialect.quote("Clients")) (\(["ClientId", "Name", "CreditLimit"].map(dialect.quote).joined(separator: ", "))) VALUES "
            for start in stride(from: 1000, to: 1000 + count, by: 500) {
                let ids = start..<min(start + 500, 1000 + count)
                let rows = ids.indices.map { row in
                    "(" + (1...3).map { dialect.placeholder((row - start) * 3 + $0) }.joined(separator: ", ") + ")"
                }
                let arguments = ids.flatMap { id -> [Value] in
                    [.integer(Int64(id)), .string("Client number \(id) with a longer name to fill the stream"), .decimal(Decimal(id % 1000))]
                }
                try connection.execute(head + rows.joined(separator: ", "), arguments)
            }
            try connection.commit()
        } }
    }

    @Test(arguments: StorageBackend.allCases)
    func aLargeTableStreamsInBatchesWithItsExpectedCount(backend: StorageBackend) async throws {
        let server = try Self.server(backend)
        try await Self.addClients(30_000, to: server.database.service)
        try await server.test { client in
            let token = try #require(try await HTTPProtocolTests.login(client))
            let whole = try await Self.getData(client, [DataRequest(table: "Clients")], token: token, binary: true)
            #expect(whole.header("Content-Length") == nil, "the answer is sent as it is made, not built whole first")
            var reader = RowStreamReader()
            var batches = 0, rows = 0, expected = -1
            for event in try reader.append(whole.body) {
                switch event {
                case .table(_, _, let expectedRows): expected = expectedRows
                case .rows(let batch):
                    batches += 1
                    rows += batch.count
                default: break
                }
            }
            try reader.finish()
            #expect(expected == 30_002 && rows == 30_002)
            #expect(batches >= 8, "rows come in batches (\(batches))")

            let filtered = try await Self.getData(client, [DataRequest(table: "Clients", where: "CreditLimit >= 990", maxRecords: 150)],
                                                  token: token, binary: true)
            let table = try #require(try RowStreamTables(filtered.body).tables.first)
            #expect(table.rowCount == 150, "the limit holds across batches")
            #expect(filtered.header("Content-Length") == "\(filtered.body.count)", "an answer under 64 KiB goes out whole, with its length")
            #expect(table.rows.allSatisfy { ($0["CreditLimit"].decimalValue ?? 0) >= 990 })
            #expect(try Self.expectedRows(in: filtered.body) == 150, "the header expects what the limit lets through")
            let all = try await Self.getData(client, [DataRequest(table: "Clients", where: "CreditLimit >= 990")], token: token, binary: true)
            #expect(try RowStreamTables(all.body).tables.first?.rowCount == 301, "1000 and 30 ids per thousand from 1990 on, each >= 990")
            #expect(try Self.expectedRows(in: all.body) == 301, "an answer within one batch counts the rows it read")
            let none = try await Self.getData(client, [DataRequest(table: "Clients", where: "CreditLimit > 5000")], token: token, binary: true)
            #expect(try Self.expectedRows(in: none.body) == 0)
            let limited = try await Self.getData(client, [DataRequest(table: "Clients", maxRecords: 5000)], token: token, binary: true)
            #expect(try Self.expectedRows(in: limited.body) == 5000, "more than a batch, cut by the limit: the count is asked for and limited")
        }
    }

    /// The row count the first table's header of a row stream announces.
    static func expectedRows(in body: Data) throws -> Int? {
        var reader = RowStreamReader()
        for case .table(_, _, let expectedRows) in try reader.append(body) { return expectedRows }
        return nil
    }

    /// An error found before the first chunk of the answer is ready is an HTTP error answer,
    /// in either encoding: a short answer is never a 200.
    @Test(arguments: StorageBackend.allCases)
    func aFailureBeforeTheAnswerBeganIsAnHTTPError(backend: StorageBackend) async throws {
        let server = try Self.server(backend)
        try await server.test { client in
            let token = try #require(try await HTTPProtocolTests.login(client))
            for binary in [true, false] {
                let refused = try await Self.getData(client, [DataRequest(table: "AuditLog")], token: token, binary: binary)
                #expect(refused.status == 403, "binary: \(binary)")
                let error = try HTTPProtocolTests.error(refused.body)
                #expect(error.code == "refused" && error.message == "the audit log is read elsewhere" && error.event == "afterGetData")
                // Errors the expression meets on the rows: a parameter never given, a function on the wrong type.
                for (expression, code) in [("Name = :missing", "expressionEvaluation"), ("UPPER(ClientId) = 'A'", "expressionEvaluation"),
                                           ("ClientId * 9223372036854775807 > 0", "expressionEvaluation")] {
                    let failed = try await Self.getData(client, [DataRequest(table: "Clients", where: expression)], token: token, binary: binary)
                    #expect(failed.status == 400, "\(expression), binary: \(binary)")
                    #expect(try HTTPProtocolTests.error(failed.body).code == code, "\(expression)")
                }
            }
            #expect(try await Self.getData(client, [DataRequest(table: "Clients")], token: token, binary: true).status == 200, "the server keeps serving")
        }
    }

    /// An error after the answer began ends it with the error: the row stream's error frame, or
    /// the JSON answer's `error` member, which the protocol's decoder reports as an error.
    @Test(arguments: StorageBackend.allCases)
    func aFailureAfterTheAnswerBeganEndsItWithTheError(backend: StorageBackend) async throws {
        let server = try Self.server(backend)
        try await Self.addClients(5_000, to: server.database.service)
        try await server.test { client in
            let token = try #require(try await HTTPProtocolTests.login(client))
            let requests = [DataRequest(table: "Clients"), DataRequest(table: "AuditLog")]
            let binary = try await Self.getData(client, requests, token: token, binary: true)
            #expect(binary.status == 200, "the answer began before afterGetData ran")
            let tables = try RowStreamTables(binary.body)
            #expect(tables.tables.first?.rowCount == 5_002)
            let error = try HTTPProtocolTests.error(try #require(tables.errorJSON))
            #expect(error.code == "refused" && error.message == "the audit log is read elsewhere" && error.event == "afterGetData")

            let json = try await Self.getData(client, requests, token: token, binary: false)
            #expect(json.status == 200)
            let object = try #require(try JSONSerialization.jsonObject(with: json.body) as? [String: Any], "the JSON stays whole")
            #expect((object["error"] as? [String: Any])?["code"] as? String == "refused")
            #expect(throws: RelataError.self) { try JSONDecoder().decode(ProtocolMessages.GetDataAnswer.self, from: json.body) }
            #expect(try await Self.getData(client, [DataRequest(table: "Clients")], token: token, binary: true).status == 200, "the server keeps serving")
        }
    }

    /// A client that asks for a large table and stops reading holds one database reader and
    /// nothing else: applies go on; when it disconnects, its read ends — more stalled reads
    /// than the pool has readers leave reads working.
    @Test(arguments: StorageBackend.allCases)
    func aStalledOrVanishedClientHoldsNothingUp(backend: StorageBackend) async throws {
        let server = try Self.server(backend)
        try await Self.addClients(100_000, to: server.database.service)
        try await server.test { client in
            let token = try #require(try await HTTPProtocolTests.login(client))
            let request = try JSONEncoder().encode(ProtocolMessages.GetDataRequest(requests: [DataRequest(table: "Clients")]))
            for round in 0..<7 {
                let socket = try RawConnection(port: client.port)
                try socket.send("POST /v2/DataService/GetData HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n"
                                + "Accept: \(RowStream.contentType)\r\nContent-Type: application/json\r\nContent-Length: \(request.count)\r\n\r\n",
                                body: request)
                #expect(try await socket.receiveSome(within: .seconds(60)).starts(with: Array("HTTP/1.1 200".utf8)), "round \(round)")
                // While this client reads nothing more, a change still applies.
                let stored: Value = round == 0 ? "Acme" : .string("Acme \(round - 1)")
                let clients = try DataTable(TableData(name: "Clients", fields: clientFields, rows: [[1, stored, .decimal(1000)]]))
                try clients.rows[0].setValue("Acme \(round)", forKey: "Name")
                let update = try JSONEncoder().encode(ProtocolMessages.UpdateDataMessage(deltas: [clients.makeDelta()]))
                let applied = try await client.request("/v2/DataService/UpdateData", body: update, token: token)
                let processed = try JSONDecoder().decode(ProtocolMessages.UpdateDataMessage.self, from: applied.body)
                #expect(processed.deltas.first?.changes.first?.status == .resolved, "round \(round)")
                socket.close()
            }
            let again = try await Self.getData(client, [DataRequest(table: "Clients", maxRecords: 3)], token: token, binary: true)
            #expect(try RowStreamTables(again.body).tables.first?.rows.first?["Name"] == "Acme 6")
        }
    }
}

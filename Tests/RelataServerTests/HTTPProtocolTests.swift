import Foundation
import Hummingbird
import Logging
import Relata
import RelataScript
@testable import RelataServer
import RelataServerTestSupport
import RelataTestSupport
import Testing

/// The protocol over a real socket: login, schema, data, updates, and every refusal as clear JSON.
@Suite(.timeLimit(.minutes(10))) struct HTTPProtocolTests {
    /// A seeded database, its services, and a user `ann` (password `secret`, role Sales).
    final class Server {
        let database: DataServiceTests.Database
        let services: ServerServices

        init(schema: SchemaDefinition? = nil, maxBodyBytes: Int = 1 << 20, backend: StorageBackend = .sqlite, readers: Int = 4,
             otherUsers: [ServerUser] = []) throws {
            database = try DataServiceTests.Database(schema: schema, backend: backend, readers: readers)
            let sessions = backend == .postgres ? try SessionStore(database: database.database)
                : try SessionStore(path: database.folder.appendingPathComponent("sessions.sqlite").path)
            let ann = ServerUser(name: "ann", passwordHash: ServerUser.hash(password: "secret", cost: 4), roles: ["Sales"], values: ["UserId": 7])
            services = try ServerServices(dataServices: [database.service], login: LoginService(users: [ann] + otherUsers, sessions: sessions))
            self.maxBodyBytes = maxBodyBytes
        }
        let maxBodyBytes: Int

        func test(_ body: @Sendable @escaping (LiveClient) async throws -> Void) async throws {
            try await withLiveServer(services, maxBodyBytes: maxBodyBytes, body)
        }

        /// Serves with limits of the test's choosing (a short timeout, a small login queue).
        func test(_ configuration: ServerConfiguration, logger: Logger = Logger(label: "relata.server"),
                  _ body: @Sendable @escaping (LiveClient) async throws -> Void) async throws {
            try await withLiveServer(services, configuration: configuration, logger: logger, body)
        }
    }

    /// Each route reads the body its message needs: a small one for the schema, requests for a
    /// read, the changes for an apply — and a data service's body is never read without a session.
    @Test func eachRouteTakesTheBodyItsMessageNeeds() async throws {
        let server = try Server()
        let configuration = ServerConfiguration(port: 0, maxBodyBytes: 1 << 20, maxBodyBytesBeforeSession: 4 << 10, maxQueryBodyBytes: 16 << 10)
        try await server.test(configuration) { client in
            let token = try #require(try await Self.login(client))
            let padding = String(repeating: " ", count: 32 << 10)
            let schema = try await Self.post(client, "/v2/DataService/GetSchema", "{}" + String(repeating: " ", count: 8 << 10), token: token)
            #expect(schema.0 == 413, "GetSchema takes no more than a login")
            let read = try await Self.post(client, "/v2/DataService/GetData", #"{"requests": [{"table": "Clients"}]}"# + padding, token: token)
            #expect(read.0 == 413, "a read takes requests, not megabytes")
            let small = try await Self.post(client, "/v2/DataService/GetData", #"{"requests": [{"table": "Clients"}]}"#, token: token)
            #expect(small.0 == 200)
            let apply = try await Self.post(client, "/v2/DataService/UpdateData", #"{"deltas": []}"# + padding, token: token)
            #expect(apply.0 == 200, "an apply takes the changes' limit: \(String(decoding: apply.1, as: UTF8.self))")
            let stranger = try await Self.post(client, "/v2/DataService/UpdateData", #"{"deltas": []}"# + padding + padding)
            #expect(stranger.0 == 401, "no session: refused before its body is read")
            let nowhere = try await Self.post(client, "/nowhere", "{}")
            #expect(nowhere.0 == 404 && (try? Self.error(nowhere.1).code) == "notFound", "an unknown path is answered in the protocol's words")
        }
    }

    static func post(_ client: LiveClient, _ path: String, _ body: String, token: String? = nil) async throws -> (Int, Data) {
        let response = try await client.request(path, body: Data(body.utf8), token: token)
        return (response.status, response.body)
    }

    static func post<Message: Encodable>(_ client: LiveClient, _ path: String, _ message: Message, token: String? = nil) async throws -> (Int, Data) {
        try await post(client, path, String(decoding: JSONEncoder().encode(message), as: UTF8.self), token: token)
    }

    static func login(_ client: LiveClient, password: String = "secret") async throws -> String? {
        let (status, data) = try await post(client, "/v2/LoginService/Login", ProtocolMessages.LoginRequest(loginString: "User=ann;Password=\(password);Schema=Shop"))
        guard status == 200 else { return nil }
        return try JSONDecoder().decode(ProtocolMessages.LoginAnswer.self, from: data).token
    }

    static func error(_ data: Data) throws -> ProtocolMessages.ErrorAnswer.Details {
        try JSONDecoder().decode(ProtocolMessages.ErrorAnswer.self, from: data).error
    }

    @Test func healthAnswers() async throws {
        try await Server().test { client in
            let response = try await client.request("/health", method: "GET")
            #expect(response.status == 200)
            #expect(String(decoding: response.body, as: UTF8.self).contains("\"status\":\"ok\""))
            #expect(String(decoding: response.body, as: UTF8.self).contains("\"protocol\":\"v2\""))
        }
    }

    /// A version 1 client sends the values its rules made, which the server's rules would change
    /// again: it is told to update, before anything runs.
    @Test func aVersionOneClientIsRefusedClearly() async throws {
        try await Server().test { client in
            for path in ["/v1/LoginService/Login", "/v1/DataService/UpdateData"] {
                let (status, data) = try await Self.post(client, path, "{}")
                #expect(status == 410)
                let details = try Self.error(data)
                #expect(details.code == "unsupportedProtocol")
                #expect(details.message.contains("protocol v2, not v1") && details.message.contains("update the client"))
            }
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func changesValidatedWithOtherRulesAreSentBackAsStale(backend: StorageBackend) async throws {
        let server = try Server(backend: backend)
        let version = server.database.service.storage.schema.version
        try await server.test { client in
            let token = try #require(try await Self.login(client))
            let stale = try await client.request("/v2/DataService/UpdateData", body: Data(#"{"deltas":[]}"#.utf8), token: token,
                                                 headers: ["X-Relata-Rules-Version": "sha256:old"])
            #expect(stale.status == 409)
            let error = try Self.error(stale.body)
            #expect(error.code == "staleRules")
            #expect(error.message.contains(version))
            let current = try await client.request("/v2/DataService/UpdateData", body: Data(#"{"deltas":[]}"#.utf8), token: token,
                                                   headers: ["X-Relata-Rules-Version": version])
            #expect(current.status == 200)
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func loginSchemaDataAndLogout(backend: StorageBackend) async throws {
        let server = try Server(backend: backend)
        let version = server.database.service.storage.schema.version
        try await server.test { client in
            #expect(try await Self.login(client, password: "wrong") == nil)
            let (failed, failure) = try await Self.post(client, "/v2/LoginService/Login", ProtocolMessages.LoginRequest(loginString: "User=ann;Password=wrong"))
            #expect(failed == 401)
            #expect(try Self.error(failure).code == "loginFailed")
            let token = try #require(try await Self.login(client))
            let (status, data) = try await Self.post(client, "/v2/DataService/GetSchema", "{}", token: token)
            #expect(status == 200)
            let schema = try JSONDecoder().decode(ProtocolMessages.SchemaAnswer.self, from: data)
            #expect(schema.version == version)
            #expect(schema.schema.table(named: "OrderDetails")?.script?.source.contains("Quantity must be positive") == true, "the rules come with the schema")

            let request = ProtocolMessages.GetDataRequest(requests: [DataRequest(table: "Clients", where: "ClientId = :id", parameters: ["id": 2])])
            let (dataStatus, tables) = try await Self.post(client, "/v2/DataService.Shop/GetData", request, token: token)
            #expect(dataStatus == 200)
            let answer = try JSONDecoder().decode(ProtocolMessages.GetDataAnswer.self, from: tables)
            #expect(answer.tables[0].rows == [[2, "Globex", .decimal(50)]])

            _ = try await Self.post(client, "/v2/LoginService/Logout", "{}", token: token)
            let (after, afterData) = try await Self.post(client, "/v2/DataService/GetSchema", "{}", token: token)
            #expect(after == 401)
            #expect(try Self.error(afterData).code == "sessionNotFound", "a client tells an ended session from a refusal, and logs in again")
        }
    }

    /// A session of a domain the server no longer serves (its configuration changed) is ended, not refused.
    @Test(arguments: StorageBackend.allCases)
    func aSessionOfADomainNoLongerServedMustLogInAgain(backend: StorageBackend) async throws {
        let server = try Server(backend: backend)
        let token = try server.services.sessions.start(Session(values: ["User": "ann", "Domain": "Gone"]))
        try await server.test { client in
            let (status, data) = try await Self.post(client, "/v2/DataService/GetSchema", "{}", token: token)
            #expect(status == 401)
            #expect(try Self.error(data).code == "sessionNotFound")
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func aTamperedDeltaIsRefusedOverTheWireWithItsLocation(backend: StorageBackend) async throws {
        try await Server(backend: backend).test { client in
            let token = try #require(try await Self.login(client))
            let details = try DataServiceTests.clientTables().details
            try details.rows[0].setValue(-5, forKey: "Quantity")
            try details.rows[2].setValue(8, forKey: "Quantity")
            let (status, data) = try await Self.post(client, "/v2/DataService/UpdateData", ProtocolMessages.UpdateDataMessage(deltas: [details.makeDelta()]), token: token)
            #expect(status == 200)
            let processed = try JSONDecoder().decode(ProtocolMessages.UpdateDataMessage.self, from: data).deltas
            #expect(processed[0].changes.map(\.status) == [.failed, .resolved])
            #expect(processed[0].changes[0].failure?.location == "OrderDetails.js:2:28")
            try details.accept(processed[0])
            #expect(details.rows[0].failureMessage == "Quantity must be positive")
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func badRequestsGetClearAnswersAndTheServerKeepsServing(backend: StorageBackend) async throws {
        try await Server(maxBodyBytes: 4096, backend: backend).test { client in
            let token = try #require(try await Self.login(client))
            let malformed = try await Self.post(client, "/v2/DataService/GetData", "{\"requests\": [", token: token)
            #expect(malformed.0 == 400)
            #expect(try Self.error(malformed.1).code == "badRequest")
            let wrongType = try await Self.post(client, "/v2/DataService/GetData", "{\"requests\": [{\"table\": 5, \"parameters\": {}}]}", token: token)
            #expect(wrongType.0 == 400)
            #expect(try Self.error(wrongType.1).message.contains("requests[0].table"))
            let unknown = try await Self.post(client, "/v2/DataService/GetData", ProtocolMessages.GetDataRequest(requests: [DataRequest(table: "Secrets")]), token: token)
            #expect(unknown.0 == 400)
            #expect(try Self.error(unknown.1).code == "unknownTable")
            let injection = try await Self.post(client, "/v2/DataService/GetData",
                ProtocolMessages.GetDataRequest(requests: [DataRequest(table: "Clients", where: "1=1; DELETE FROM Clients")]), token: token)
            #expect(injection.0 == 400)
            #expect(try Self.error(injection.1).code == "expressionSyntax")
            let huge = try await Self.post(client, "/v2/DataService/GetData", String(repeating: " ", count: 10_000), token: token)
            #expect(huge.0 == 413)
            let noSchema = try await Self.post(client, "/v2/DataService.Nope/GetSchema", "{}", token: token)
            #expect(noSchema.0 == 404)
            let noMethod = try await Self.post(client, "/v2/DataService/Drop", "{}", token: token)
            #expect(noMethod.0 == 404)
            let command = try await Self.post(client, "/v2/DataService/ExecuteCommand", "{}", token: token)
            #expect(command.0 == 400, "a command request names its command")
            let sql = try await Self.post(client, "/v2/DataService/SQLGetData", "{}", token: token)
            #expect(sql.0 == 400, "a DA SQL request holds its query")
            let badLogin = try await Self.post(client, "/v2/LoginService/Login", ProtocolMessages.LoginRequest(loginString: "Usr=ann"))
            #expect(badLogin.0 == 400)
            let (status, data) = try await Self.post(client, "/v2/DataService/GetData",
                                                     ProtocolMessages.GetDataRequest(requests: [DataRequest(table: "Clients")]), token: token)
            #expect(status == 200, "still serving")
            #expect(try JSONDecoder().decode(ProtocolMessages.GetDataAnswer.self, from: data).tables[0].rows.count == 2)
        }
    }
}

extension HTTPProtocolTests {
    /// The OpenAPI document names every operation the server answers, for the schemas it serves.
    @Test func theOpenAPIDocumentListsWhatTheServerServes() async throws {
        try await Server().test { client in
            let response = try await client.request("/openapi.json", method: "GET")
            #expect(response.status == 200)
            let document = try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
            #expect(document["openapi"] as? String == "3.0.3")
            let paths = Set((document["paths"] as? [String: Any] ?? [:]).keys)
            for service in ["DataService", "DataService.Shop"] {
                for method in ["GetSchema", "GetData", "UpdateData", "ExecuteCommand", "SQLGetData"] {
                    #expect(paths.contains("/v2/\(service)/\(method)"), "\(service)/\(method)")
                }
            }
            #expect(paths.isSuperset(of: ["/health", "/v2/LoginService/Login", "/v2/LoginService/Logout"]))
        }
    }
}

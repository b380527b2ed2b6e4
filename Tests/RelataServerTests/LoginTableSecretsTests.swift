import Foundation
import Relata
@testable import RelataServer
import RelataServerTestSupport
import RelataTestSupport
import Testing

/// A login table's passwords are never read through the protocol, and its passwords and roles
/// are written only by the roles named for it — even with every table open to every user.
/// Each attack over a socket, on both backends.
@Suite(.timeLimit(.minutes(10))) struct LoginTableSecretsTests {
    static let userFields = [FieldDefinition("UserName", .string, size: 40, primaryKey: true), FieldDefinition("PasswordHash", .string, size: 100),
                             FieldDefinition("Roles", .string, size: 100), FieldDefinition("Email", .string, size: 100)]

    final class Setup {
        let database: DataServiceTests.Database
        let services: ServerServices
        init(_ backend: StorageBackend) async throws {
            let schema = try SchemaDefinition(name: "Shop", tables: [TableDefinition(name: "Clients", fields: clientFields),
                                                                     TableDefinition(name: "Users", fields: LoginTableSecretsTests.userFields)])
            database = try DataServiceTests.Database(schema: schema, backend: backend)
            let secrets = LoginTableFields(table: "Users", passwordField: "PasswordHash", rolesField: "Roles", writers: ["Admin"])
            let service = try DataService(storage: database.service.storage, runtimes: 1, loginTable: secrets)
            let rows = ["ann", "bob"].enumerated().map { index, name in
                DeltaChange(changeId: index + 1, type: .insert, newValues: ["UserName": .string(name), "PasswordHash": .string(ServerUser.hash(password: "pw-\(name)", cost: 4)),
                                                                          "Roles": "Sales", "Email": .string("\(name)@example.com")])
            }
            let seeded = try await service.updateData([Delta(tableName: "Users", keyFields: ["UserName"], loggedFields: LoginTableSecretsTests.userFields.map(\.name),
                                                             changes: rows)], session: Session(values: ["User": "root"], roles: ["Admin"]))
            #expect(seeded[0].changes.allSatisfy { $0.status == .resolved })
            let table = try TableUsers(storage: service.storage, table: "Users", userField: "UserName", passwordField: "PasswordHash", rolesField: "Roles")
            let admin = ServerUser(name: "root", passwordHash: ServerUser.hash(password: "pw-root", cost: 4), roles: ["Admin"])
            services = try ServerServices(dataServices: [service], login: LoginService(providers: [StaticUsers([admin]), table],
                                                                                        sessions: try backend.makeSessions(in: database.database)))
        }
    }

    static func token(_ client: LiveClient, _ user: String) async throws -> String {
        let (status, data) = try await HTTPProtocolTests.post(client, "/v2/LoginService/Login", ProtocolMessages.LoginRequest(loginString: "User=\(user);Password=pw-\(user)"))
        try #require(status == 200)
        return try JSONDecoder().decode(ProtocolMessages.LoginAnswer.self, from: data).token
    }

    static func get(_ client: LiveClient, _ request: DataRequest, token: String) async throws -> (Int, String) {
        let (status, data) = try await HTTPProtocolTests.post(client, "/v2/DataService/GetData", ProtocolMessages.GetDataRequest(requests: [request]), token: token)
        return (status, String(decoding: data, as: UTF8.self))
    }

    @Test(arguments: StorageBackend.allCases)
    func passwordsAreNeverRead(backend: StorageBackend) async throws {
        let setup = try await Setup(backend)
        defer { withExtendedLifetime(setup) {} }   // its database lives as long as the test
        try await withLiveServer(setup.services) { client in
            let ann = try await Self.token(client, "ann")
            let (status, rows) = try await Self.get(client, DataRequest(table: "Users"), token: ann)
            #expect(status == 200)
            #expect(rows.contains("bob@example.com") && !rows.contains("PasswordHash") && !rows.contains("$2"), "\(rows)")
            for request in [DataRequest(table: "Users", fields: ["UserName", "PasswordHash"]),
                            DataRequest(table: "Users", where: "PasswordHash LIKE '$2b$04$A%'")] {
                let (refused, text) = try await Self.get(client, request, token: ann)
                #expect(refused == 403, "\(text)")
                #expect(text.contains("Users.PasswordHash, which holds passwords: it is never sent"), "\(text)")
            }
            let (named, sqlText) = try await Self.get(client, DataRequest(table: "Q", sql: "SELECT UserName, PasswordHash FROM Users"), token: ann)
            #expect(named == 400 && sqlText.contains("PasswordHash"), "\(sqlText)")
            let (star, starText) = try await Self.get(client, DataRequest(table: "Q", sql: "SELECT * FROM Users"), token: ann)
            #expect(star == 200 && !starText.contains("PasswordHash") && !starText.contains("$2"), "\(starText)")
        }
    }

    @Test(arguments: StorageBackend.allCases)
    func aUserCannotRaiseHisRolesOrTakeAnotherPassword(backend: StorageBackend) async throws {
        let setup = try await Setup(backend)
        defer { withExtendedLifetime(setup) {} }   // its database lives as long as the test
        let service = setup.database.service
        try await withLiveServer(setup.services) { client in
            let ann = try await Self.token(client, "ann")
            func update(_ user: String, _ field: String, _ value: Value, token: String) async throws -> (Int, String) {
                var change = DeltaChange(changeId: 1, type: .update, oldValues: ["UserName": .string(user)], newValues: ["UserName": .string(user), field: value])
                change.edits = [RowEdit(sequence: 1, kind: .update, values: [field: value])]
                let body = try DeltaJSON.encode([Delta(tableName: "Users", keyFields: ["UserName"], loggedFields: Self.userFields.map(\.name), changes: [change])])
                let (status, data) = try await HTTPProtocolTests.post(client, "/v2/DataService/UpdateData", String(decoding: body, as: UTF8.self), token: token)
                return (status, String(decoding: data, as: UTF8.self))
            }
            let (raised, raisedText) = try await update("ann", "Roles", "Sales,Admin", token: ann)
            #expect(raised == 403 && raisedText.contains("writing Users.Roles is not allowed for roles [Sales]"), "\(raisedText)")
            let stolen = try await update("bob", "PasswordHash", .string(ServerUser.hash(password: "mine", cost: 4)), token: ann)
            #expect(stolen.0 == 403, "\(stolen.1)")

            // Her own e-mail she may change; the answer carries no hash, and her password still works.
            let (changed, changedText) = try await update("ann", "Email", "ann@new.example", token: ann)
            #expect(changed == 200 && changedText.contains("resolved") && !changedText.contains("$2"), "\(changedText)")
            _ = try await Self.token(client, "ann")

            // The role named for it may.
            let root = try await Self.token(client, "root")
            let (granted, grantedText) = try await update("bob", "Roles", "Sales,Manager", token: root)
            #expect(granted == 200 && grantedText.contains("resolved"), "\(grantedText)")
        }
        let stored = try service.storedRows(of: "Users")
        #expect(stored.first { $0["UserName"] == "ann" }?["Roles"] == "Sales")
        #expect(stored.first { $0["UserName"] == "bob" }?["Roles"] == "Sales,Manager")
        #expect(stored.first { $0["UserName"] == "ann" }?["Email"] == "ann@new.example")
    }
}

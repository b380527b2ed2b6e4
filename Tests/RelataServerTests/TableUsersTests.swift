import Foundation
import Relata
@testable import RelataServer
import RelataServerTestSupport
import RelataTestSupport
import Testing

/// Users kept in a schema table: name, bcrypt hash, roles, session values.
@Suite(.timeLimit(.minutes(10))) struct TableUsersTests {
    @Test(arguments: StorageBackend.allCases)
    func usersOfATableLogInWithTheirRolesAndValues(backend: StorageBackend) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("relata-users-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let fields = [FieldDefinition("UserName", .string, size: 40, primaryKey: true), FieldDefinition("PasswordHash", .string, size: 100),
                      FieldDefinition("Roles", .string, size: 100), FieldDefinition("UserId", .integer)]
        var table = TableDefinition(name: "Users", fields: fields)
        table.columns = ["PasswordHash": "pw_hash"]
        let schema = try SchemaDefinition(name: "Accounts", tables: [table])
        let (database, cleanup) = try backend.makeDatabase(in: folder)
        defer { cleanup() }
        let storage = try SQLStorage(database: database, schema: schema)
        let users = try DataTable(name: "Users", fields: fields)
        try users.loadRows([["ann", .string(ServerUser.hash(password: "pw", cost: 4)), "Sales, Manager", 7]])
        try storage.seedIfEmpty(with: [users])

        let provider = try TableUsers(storage: storage, table: "users", userField: "UserName", passwordField: "PasswordHash",
                                      rolesField: "Roles", valueFields: ["UserId"])
        let account = try #require(try provider.account(named: "ann"))
        #expect(account.session.roles == ["Sales", "Manager"])
        #expect(account.session.values == ["User": "ann", "UserId": 7])
        #expect(try provider.account(named: "bob") == nil)
        let checks = LoginService(providers: [provider], sessions: try backend.makeSessions(in: database))
        #expect(try checks.authenticate(LoginString("User=ann;Password=nope")) == nil)
        #expect(try checks.authenticate(LoginString("User=bob;Password=pw")) == nil)
        #expect(throws: RelataError.self) { try TableUsers(storage: storage, table: "Users", userField: "Login", passwordField: "PasswordHash") }

        let service = LoginService(providers: [StaticUsers([]), provider], sessions: try backend.makeSessions(in: database))
        #expect(try service.authenticate(LoginString("User=ann;Password=pw"))?.values["UserId"] == 7)
    }
}

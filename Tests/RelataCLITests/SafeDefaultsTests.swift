import Foundation
import Testing
import RelataTestSupport

/// `relata serve --config` with permissions that would quietly open or close a door: a misspelt
/// table or role, a login table nobody closed, no permissions at all — refused at the start with
/// "did you mean", or said once in the log.
@Suite(.serialized, .timeLimit(.minutes(10))) struct SafeDefaultsTests {
    /// A configuration serving PCTrade with PCTrade's users, the given permissions and domain members.
    static func config(in folder: TemporaryFolder, permissions: String?, domain extra: String = "") throws -> String {
        _ = try folder.write("users.json", try String(contentsOfFile: RelataProcess.packageRoot
            .appendingPathComponent("Examples/PCTrade/users.json").path, encoding: .utf8))
        let given = permissions.map { #", "permissions": \#($0)"# } ?? ""
        return try folder.write("server.json", """
            {"port": 0, "domains": [{"name": "Shop", "usersFile": "users.json"\(extra),
              "schemas": [{"schema": "\(RelataProcess.pcTradeSchema)", "database": "shop.sqlite"\(given)}]}]}
            """)
    }

    @Test func aMisspeltTableOrRoleStopsTheStartSayingWhatWasMeant() async throws {
        let folder = try TemporaryFolder()
        let table = try await RelataProcess.run(["serve", "--config", Self.config(in: folder, permissions: #"{"Clints": {"read": ["Sales"]}}"#)])
        #expect(table.status != 0)
        #expect(table.errorOutput.contains("permissions name the table 'Clints', which the schema does not have (did you mean Clients?)"), "\(table.errorOutput)")

        let role = try await RelataProcess.run(["serve", "--config", Self.config(in: folder, permissions: #"{"Clients": {"read": ["Sals"]}, "*": {"read": ["*"]}}"#)])
        #expect(role.status != 0)
        #expect(role.errorOutput.contains("give read to the role 'Sals', which no user has (did you mean Sales?)"), "\(role.errorOutput)")

        // A role no user has yet, declared by the domain, is no typo.
        let declared = try await ServeCommandTests.Server(["--config", Self.config(in: folder, permissions: #"{"Clients": {"read": ["Auditor"]}}"#,
                                                                           domain: #", "roles": ["Auditor"]"#)])
        #expect(declared.port > 0, "\(declared.errorOutput)")
        _ = await declared.stop()
    }

    @Test func aLoginTableNoPermissionNamesStopsTheStart() async throws {
        let folder = try TemporaryFolder()
        let login = #", "loginTable": {"table": "Clients", "userField": "ClientName", "passwordField": "ContactPhone"}"#
        let refused = try await RelataProcess.run(["serve", "--config", Self.config(in: folder, permissions: #"{"*": {"read": ["*"]}}"#, domain: login)])
        #expect(refused.status != 0)
        #expect(refused.errorOutput.contains("the login table Clients holds passwords and roles"), "\(refused.errorOutput)")
        #expect(refused.errorOutput.contains(#""Clients": {} closes it to everyone"#), "\(refused.errorOutput)")

        let closed = try await ServeCommandTests.Server(["--config", Self.config(in: folder, permissions: #"{"Clients": {}, "*": {"read": ["*"]}}"#, domain: login)])
        #expect(closed.port > 0)
        _ = await closed.stop()
    }

    @Test func noPermissionsAtAllIsSaidOnceAtTheStart() async throws {
        let folder = try TemporaryFolder()
        let server = try await ServeCommandTests.Server(["--config", Self.config(in: folder, permissions: nil)])
        #expect(server.port > 0)
        #expect(await server.stop() == 0)
        let log = server.errorOutput
        #expect(log.components(separatedBy: "no permissions for Shop/PCTrade: every logged-in user may read and change every table there").count == 2, "\(log)")
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import RelataTestSupport
import Testing

extension ServeCommandTests {
    /// `console.adminRoles` in a configuration file and `--console-admin-role` add up; a role no
    /// user has is refused at the start (a misspelt one would quietly hide the Server page).
    @Test(.timeLimit(.minutes(5))) func adminRolesComeFromTheConfigurationAndTheCommandLine() async throws {
        let folder = try TemporaryFolder()
        let users = try String(contentsOfFile: RelataProcess.packageRoot.appendingPathComponent("Examples/PCTrade/users.json").path, encoding: .utf8)
        _ = try folder.write("users.json", users)
        func config(_ name: String, adminRoles: String) throws -> String {
            try folder.write(name, """
                {"port": 0, "console": {"adminRoles": \(adminRoles)},
                 "domains": [{"name": "Shop", "usersFile": "users.json", "schemas": [{"schema": "\(RelataProcess.pcTradeSchema)", "database": "shop.sqlite"}]}]}
                """)
        }
        let server = try await Server(["--config", try config("server.json", adminRoles: #"["Manager"]"#), "--console-admin-role", "Clerk"])
        for user in ["demo", "clerk"] {
            let (_, login) = try await server.post("/v2/LoginService/Login", #"{"loginString": "User=\#(user);Password=\#(user)"}"#)
            #expect(login["admin"] as? Bool == true, "\(user): \(login)")
            let token = try #require(login["token"] as? String)
            let (status, overview) = try await server.post("/v2/AdminService/Overview", "{}", token: token)
            #expect(status == 200, "\(overview)")
            #expect(overview["domain"] as? String == "Shop")
        }
        #expect(await server.stop() == 0)

        let misspelt = try await RelataProcess.run(["serve", "--config", try config("misspelt.json", adminRoles: #"["Manger"]"#)])
        #expect(misspelt.status == 2)
        #expect(misspelt.errorOutput.contains("misspelt.json"), "\(misspelt.errorOutput)")
        #expect(misspelt.errorOutput.contains("console.adminRoles names the role 'Manger', which no user has (did you mean Manager?)"), "\(misspelt.errorOutput)")
        let option = try await RelataProcess.run(["serve", "--port", "0", "--users", folder.url.appendingPathComponent("users.json").path,
                                            "--database", ":memory:", "--console-admin-role", "Root"])
        #expect(option.status == 2)
        #expect(option.errorOutput.contains("the role 'Root', which no user has"), "\(option.errorOutput)")
        let unknownKey = try await RelataProcess.run(["serve", "--config", try folder.write("key.json", #"{"console": {"adminRole": ["Manager"]}, "domains": []}"#)])
        #expect(unknownKey.status == 2)
        #expect(unknownKey.errorOutput.contains("console.adminRole: unknown key 'adminRole' (did you mean 'adminRoles'?)"), "\(unknownKey.errorOutput)")
    }
}

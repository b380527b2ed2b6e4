import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import RelataTestSupport
import Testing

extension ServeCommandTests {
    /// `cors.allowOrigins` in a configuration file and `--cors-allow-origin` add up; an origin
    /// that is not one is refused at the start, naming the file or the option.
    @Test(.timeLimit(.minutes(5))) func corsOriginsComeFromTheConfigurationAndTheCommandLine() async throws {
        let folder = try TemporaryFolder()
        _ = try folder.write("users.json", "[]")
        let config = try folder.write("server.json", """
            {"port": 0, "cors": {"allowOrigins": ["https://shop.example.com"]},
             "domains": [{"name": "Shop", "usersFile": "users.json", "schemas": [{"schema": "\(RelataProcess.pcTradeSchema)", "database": "shop.sqlite"}]}]}
            """)
        let server = try await Server(["--config", config, "--cors-allow-origin", "http://localhost:5173"])
        for (origin, allowed) in [("https://shop.example.com", true), ("http://localhost:5173", true), ("https://evil.example", false)] {
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(server.port)/v2/LoginService/Login")!)
            request.httpMethod = "OPTIONS"
            request.setValue(origin, forHTTPHeaderField: "Origin")
            request.setValue("POST", forHTTPHeaderField: "Access-Control-Request-Method")
            let (_, response) = try await URLSession.shared.data(for: request)
            let http = try #require(response as? HTTPURLResponse)
            #expect(http.statusCode == (allowed ? 204 : 403), "\(origin)")
            #expect((http.value(forHTTPHeaderField: "Access-Control-Allow-Origin") == origin) == allowed, "\(origin)")
        }
        #expect(await server.stop() == 0)

        let bad = try folder.write("bad.json", """
            {"cors": {"allowOrigins": ["https://shop.example.com/"]},
             "domains": [{"name": "Shop", "usersFile": "users.json", "schemas": [{"schema": "\(RelataProcess.pcTradeSchema)", "database": "shop.sqlite"}]}]}
            """)
        let refused = try await RelataProcess.run(["serve", "--config", bad])
        #expect(refused.status == 2)
        #expect(refused.errorOutput.contains("bad.json"), "\(refused.errorOutput)")
        #expect(refused.errorOutput.contains("'https://shop.example.com/' is not an origin: it ends with '/'"), "\(refused.errorOutput)")
        let misspelt = try folder.write("misspelt.json", #"{"cors": {"allowOrigin": ["*"]}, "domains": []}"#)
        let unknown = try await RelataProcess.run(["serve", "--config", misspelt])
        #expect(unknown.status == 2)
        #expect(unknown.errorOutput.contains("cors.allowOrigin: unknown key 'allowOrigin' (did you mean 'allowOrigins'?)"), "\(unknown.errorOutput)")
        let option = try await RelataProcess.run(["serve", "--port", "0", "--cors-allow-origin", "localhost:5173"])
        #expect(option.status == 64)
        #expect(option.errorOutput.contains("--cors-allow-origin: cors.allowOrigins: 'localhost:5173' is not an origin: it has no scheme"), "\(option.errorOutput)")
    }
}

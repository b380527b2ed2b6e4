import Foundation
import Testing
import RelataTestSupport

/// `relata sessions list|end` against a running `relata serve`'s session database.
@Suite(.serialized, .timeLimit(.minutes(10))) struct SessionsCommandTests {
    @Test func anOperatorListsAndEndsAUsersSessions() async throws {
        let folder = try TemporaryFolder()
        let database = folder.url.appendingPathComponent("pctrade.sqlite").path
        let server = try await ServeCommandTests.Server(["--port", "0", "--database", database])
        try #require(server.port > 0)
        defer { server.kill() }
        func login(_ user: String) async throws -> String {
            let (status, answer) = try await server.post("/v2/LoginService/Login", #"{"loginString": "User=\#(user);Password=\#(user)"}"#)
            try #require(status == 200)
            return try #require(answer["token"] as? String)
        }
        let demo = try await login("demo"), clerk = try await login("clerk")
        let sessions = database + "-sessions"

        let listed = try await RelataProcess.run(["sessions", "list", "--sessions", sessions])
        #expect(listed.status == 0, "\(listed.errorOutput)")
        #expect(listed.output.contains("demo  ") && listed.output.contains("[Sales, Manager]") && listed.output.contains("[Clerk]") && listed.output.hasSuffix("2 sessions\n"), "\(listed.output)")
        #expect(!listed.output.contains(clerk), "tokens are never shown")

        let ended = try await RelataProcess.run(["sessions", "end", "--sessions", sessions, "--user", "clerk"])
        #expect(ended.status == 0 && ended.output == "ended 1 session\n", "\(ended.output) \(ended.errorOutput)")
        let (refused, _) = try await server.post("/v2/DataService.PCTrade/GetSchema", "{}", token: clerk)
        #expect(refused == 401, "the clerk's session ended on the running server")
        let (served, _) = try await server.post("/v2/DataService.PCTrade/GetSchema", "{}", token: demo)
        #expect(served == 200)

        let wrong = try await RelataProcess.run(["sessions", "end", "--sessions", sessions])
        #expect(wrong.status == 64, "neither --user nor --all")
        let missing = try await RelataProcess.run(["sessions", "list", "--sessions", folder.url.appendingPathComponent("none").path])
        #expect(missing.status == 2 && missing.errorOutput.contains("there is no session database at"), "\(missing.errorOutput)")
    }
}

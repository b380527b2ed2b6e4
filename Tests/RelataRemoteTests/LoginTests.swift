import Foundation
import Relata
import RelataRemote
import Testing

/// Logging in: credentials, the delegate, bounded refusals, sessions that end.
@Suite(.timeLimit(.minutes(10))) struct LoginTests {
    final class Asker: RemoteDataAdapterDelegate {
        var answers: [RemoteCredentials?]
        var asked: [(attempt: Int, refusal: String?)] = []
        var loggedIn: [String] = []
        init(_ answers: [RemoteCredentials?]) { self.answers = answers }

        func remoteDataAdapter(_ adapter: RemoteDataAdapter, needsLoginAfter refusal: RemoteError?, attempt: Int) async -> RemoteCredentials? {
            asked.append((attempt, refusal?.code))
            return answers.isEmpty ? nil : answers.removeFirst()
        }
        func remoteDataAdapter(_ adapter: RemoteDataAdapter, didLogInAs user: String, session: Session) {
            loggedIn.append(user)
        }
    }

    @Test func withoutCredentialsTheCallFailsClearly() async throws {
        let server = try PCTradeServer()
        try await server.serve { url in
            let adapter = RemoteDataAdapter(targetURL: url)
            do {
                _ = try await adapter.getDataTable("Clients")
                Issue.record("fetched without a login")
            } catch let error as RemoteError {
                #expect(error.kind == .authentication)
                #expect(error.code == "noCredentials")
            }
        }
    }

    @Test func theDelegateIsAskedAgainAfterARefusal() async throws {
        let server = try PCTradeServer()
        try await server.serve { url in
            let adapter = RemoteDataAdapter(targetURL: url)
            let asker = Asker([RemoteCredentials(user: "demo", password: "wrong"), RemoteCredentials(user: "demo", password: "demo")])
            adapter.delegate = asker
            let clients = try await adapter.getDataTable("Clients")
            #expect(clients.rowCount > 0)
            #expect(asker.asked.map(\.attempt) == [1, 2])
            #expect(asker.asked.map(\.refusal) == [nil, "loginFailed"])
            #expect(asker.loggedIn == ["demo"])
        }
    }

    @Test func refusalsAreBounded() async throws {
        let server = try PCTradeServer()
        try await server.serve { url in
            let adapter = RemoteDataAdapter(targetURL: url)
            let wrong = RemoteCredentials(user: "demo", password: "wrong")
            let asker = Asker(Array(repeating: wrong, count: 10))
            adapter.delegate = asker
            adapter.maxLoginAttempts = 3
            do {
                try await adapter.logIn()
                Issue.record("a wrong password logged in")
            } catch let error as RemoteError {
                #expect(error.kind == .authentication)
                #expect(error.message.contains("refused 3 logins"))
            }
            #expect(asker.asked.count == 3)
        }
    }

    @Test func anEndedSessionLogsInAgainAndTheCallGoesOn() async throws {
        let server = try PCTradeServer()
        try await server.serve { url in
            let adapter = demoAdapter(url)
            let listener = Asker([])
            adapter.delegate = listener
            try await adapter.logIn()
            let first = adapter.session
            // The session ends on the server (as after an expiry): every session of the store goes.
            try server.services.sessions.endAll()
            let clients = try await adapter.getDataTable("Clients")
            #expect(clients.rowCount > 0)
            #expect(adapter.session != nil && first != nil)
            #expect(listener.loggedIn == ["demo", "demo"], "logged in again with the same credentials")
            #expect(listener.asked.isEmpty, "the credentials were enough; nobody was asked")
        }
    }

    @Test func aSeparatorInACredentialIsRefusedWithoutEchoingIt() throws {
        let credentials = RemoteCredentials(user: "ann", password: "se;cret")
        do {
            _ = try credentials.loginString()
            Issue.record("a ';' went into the login string")
        } catch let error as RelataError {
            #expect(error.message.contains("password"))
            #expect(!error.message.contains("se;cret"))
        }
        #expect("\(credentials)" == "ann")
    }
}

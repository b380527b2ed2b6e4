import Foundation
import Relata

/// Logging in, and the calls that log in again when the server asks.
extension RemoteDataAdapter {
    /// Logs in with ``credentials`` (or what the delegate gives) and keeps the session.
    ///
    /// Calls log in by themselves when the server asks; call this to log in up front.
    /// - Throws: ``RemoteError`` of kind ``RemoteError/Kind/authentication`` when there are no
    ///   credentials or the server refused them ``maxLoginAttempts`` times.
    nonisolated(nonsending) public func logIn() async throws {
        var refusal: RemoteError?
        var attempt = 1
        while true {
            let given: RemoteCredentials?
            if attempt == 1, let credentials {
                given = credentials
            } else if let delegate {
                given = await delegate.remoteDataAdapter(self, needsLoginAfter: refusal, attempt: attempt)
            } else {
                given = nil
            }
            guard let given else {
                throw refusal.map { RemoteError(kind: .authentication, code: $0.code, message: "the server refused the login: \($0.message)", status: $0.status) }
                    ?? RemoteError(kind: .authentication, code: "noCredentials",
                                   message: "the server at \(targetURL.absoluteString) asks for a login and no credentials were given (set credentials or a delegate)")
            }
            let body = try JSONEncoder().encode(ProtocolMessages.LoginRequest(loginString: try given.loginString()))
            let answer = try await transport.send(ProtocolCall(service: loginService, method: "Login", body: body))
            if answer.status == 200 {
                let login: ProtocolMessages.LoginAnswer
                do {
                    login = try JSONDecoder().decode(ProtocolMessages.LoginAnswer.self, from: answer.body)
                } catch {
                    throw RemoteError.invalidResponse("Login", error)
                }
                token = login.token
                session = login.session
                credentials = given
                rules?.adapter.session = login.session
                delegate?.remoteDataAdapter(self, didLogInAs: given.user, session: login.session)
                return
            }
            let error = RemoteError(status: answer.status, body: answer.body)
            guard error.kind == .authentication, attempt < maxLoginAttempts else {
                throw error.kind == .authentication
                    ? RemoteError(kind: .authentication, code: error.code, message: "the server refused \(attempt) logins in a row: \(error.message)", status: error.status)
                    : error
            }
            refusal = error
            attempt += 1
        }
    }

    /// Ends the session on the server. Harmless without one.
    nonisolated(nonsending) public func logOut() async throws {
        guard let token else { return }
        self.token = nil
        session = nil
        let answer = try await transport.send(ProtocolCall(service: loginService, method: "Logout", body: Data("{}".utf8), token: token))
        guard answer.status == 200 else { throw RemoteError(status: answer.status, body: answer.body) }
    }

    /// Sends a call with the session, logging in first when there is none, and again (then
    /// retrying once per login) when the server says the session is gone.
    nonisolated(nonsending) func call(_ service: String, _ method: String, body: Data, prefer: String? = nil,
                                      contentType: String? = nil, accept: String? = nil) async throws -> ProtocolAnswer {
        try await withSession { token in
            let answer = try await transport.send(ProtocolCall(service: service, method: method, body: body, token: token, accept: accept,
                                                               rulesVersion: rulesVersion, prefer: prefer, contentType: contentType))
            guard answer.status == 200 else { throw RemoteError(status: answer.status, body: answer.body) }
            return answer
        }
    }

    /// Runs `body` with a session token; a `sessionNotFound` from it logs in again and reruns it.
    nonisolated(nonsending) func withSession<Result>(_ body: nonisolated(nonsending) (String) async throws -> Result) async throws -> Result {
        var logins = 0
        while true {
            if token == nil {
                try await logIn()
                logins += 1
            }
            guard let token else { continue }
            do {
                return try await body(token)
            } catch let error as RemoteError where error.code == RemoteError.sessionNotFoundCode {
                self.token = nil
                guard logins < maxLoginAttempts else {
                    throw RemoteError(kind: .authentication, code: error.code,
                                      message: "the server ended \(logins) new sessions in a row: \(error.message)", status: error.status)
                }
            }
        }
    }
}

import Foundation
import Hummingbird
import Logging
import Relata

/// `LoginService`: the routes a stranger may call. Their bodies are small
/// (``ServerConfiguration/maxBodyBytesBeforeSession``), and a login's password check runs on
/// its domain's ``PasswordChecks``, never on the server's threads.
struct LoginRoutes {
    let services: ServerServices
    let configuration: ServerConfiguration

    func add(to group: RouterGroup<RelataRequestContext>) {
        group.post("Login", use: login)
        group.post("Logout", use: logout)
        group.post(":method") { _, context -> Response in
            throw ProtocolError.notFound("LoginService has no method '\(context.parameters.get("method") ?? "")' (methods: Login, Logout)")
        }
    }

    @Sendable func login(_ request: Request, context: RelataRequestContext) async throws -> Response {
        context.record.note { $0.service = "LoginService" }
        let message = try await context.message(ProtocolMessages.LoginRequest.self, of: request, limit: configuration.maxBodyBytesBeforeSession,
                                                within: configuration.bodyTimeout)
        let login = try LoginString(message.loginString)
        let domain = try services.domain(named: login.domain)
        let logger = context.logger
        let who: Logger.Metadata = ["user": .string(login.user), "domain": .string(domain.name)]
        context.record.note { facts in
            facts.user = login.user
            facts.domain = domain.name
        }
        // The throttle's queries off the cooperative pool; the slow password hash on PasswordChecks' own workers.
        let checked: LoginService.Check
        do {
            checked = try await domain.login.check(login, in: domain.name)
        } catch is PasswordChecks.Full {
            context.record.note { $0.login = .busy }
            throw ProtocolError.busy("too many logins are being checked; try again in a second", retryAfter: 1)
        } catch let error as LoginService.LockedOut {
            context.record.note { $0.login = .lockedOut }
            logger.audit(.loginLockedOut, "a login was refused: too many failed logins for this user lately (\(error.retryAfter) s to wait)",
                         level: .warning, metadata: who)
            throw error
        }
        let wrong = ProtocolError.loginFailed("the user name or the password is wrong")
        var authenticated: Session
        switch checked {
        case .accepted(let session): authenticated = session
        case .refused:
            context.record.note { $0.login = .failed }
            logger.audit(.loginFailed, "a login failed: the password is wrong", level: .warning, metadata: who)
            throw wrong
        case .unknownUser(let wait):
            context.record.note { $0.login = .failed }
            logger.audit(.loginFailed, "a login failed: there is no such user", level: .warning, metadata: who)
            // As long as a real check takes, holding no thread: a flood of made-up names costs nothing.
            try await Task.sleep(for: .milliseconds(Int64(wait * 1000)))
            throw wrong
        }
        authenticated.values["Domain"] = .string(domain.name)
        let dataService = try domain.dataService(named: login.schema.map { "DataService.\($0)" } ?? "DataService")
        let session = try await dataService.afterLogin(user: login.user, session: authenticated)
        let sessions = services.sessions
        let accountRoles = authenticated.roles
        let token = try await OffCooperativePool.run { try sessions.start(session, accountRoles: accountRoles) }
        context.record.note { $0.login = .succeeded }
        logger.audit(.loginSucceeded, "logged in", metadata: who)
        return try RelataHTTPServer.json(ProtocolMessages.LoginAnswer(token: token, session: session,
                                                                           admin: configuration.isAdmin(session) ? true : nil))
    }

    @Sendable func logout(_ request: Request, context: RelataRequestContext) async throws -> Response {
        context.record.note { $0.service = "LoginService" }
        if let token = SessionMiddleware.bearerToken(request) {
            let sessions = services.sessions
            try await OffCooperativePool.run { try sessions.end(token) }
        }
        return try RelataHTTPServer.json([String: String]())
    }
}

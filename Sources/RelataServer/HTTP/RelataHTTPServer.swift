import Foundation
import Hummingbird
import Logging
import NIOCore
import Relata
import RelataScript
import ServiceLifecycle

/// Where and how the server listens, and the limits that keep one client from holding up the
/// others (`Documentation/Server.md` lists each with its `relata serve` option).
public struct ServerConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// The largest request body accepted once the request's session is known (a larger one is answered 413).
    public var maxBodyBytes: Int
    /// The largest body of a request whose session is not known yet: a login, or any request
    /// without a valid session (a stranger cannot make the server read megabytes).
    public var maxBodyBytesBeforeSession: Int
    /// The most bytes of request bodies the server holds at once, across all requests (a body
    /// that would go past it is answered 503 with `Retry-After`).
    public var maxBodyBytesInFlight: Int
    /// How long a connection may stay idle, and how long a request's head may take to arrive.
    public var idleTimeout: Duration
    /// How long a request's whole body may take to arrive (answered 408 after).
    public var bodyTimeout: Duration
    /// How long one write of an answer may wait for the client to read before the connection is closed.
    public var writeTimeout: Duration
    /// Password checks that run at once in a domain, and logins that may wait for one (more
    /// are answered 503); see ``PasswordChecks``.
    public var loginWorkers: Int
    public var loginQueue: Int
    /// How long requests in flight may take to finish when the server is asked to stop.
    public var shutdownGrace: Duration

    public init(host: String = "127.0.0.1", port: Int = 7099, maxBodyBytes: Int = 32 << 20, maxBodyBytesBeforeSession: Int = 64 << 10,
                maxBodyBytesInFlight: Int = 256 << 20, idleTimeout: Duration = .seconds(30), bodyTimeout: Duration = .seconds(60), writeTimeout: Duration = .seconds(15),
                loginWorkers: Int = max(1, ProcessInfo.processInfo.activeProcessorCount / 2), loginQueue: Int = 16,
                shutdownGrace: Duration = .seconds(10)) {
        self.host = host
        self.port = port
        self.maxBodyBytes = maxBodyBytes
        self.maxBodyBytesBeforeSession = maxBodyBytesBeforeSession
        self.maxBodyBytesInFlight = maxBodyBytesInFlight
        self.idleTimeout = idleTimeout
        self.bodyTimeout = bodyTimeout
        self.writeTimeout = writeTimeout
        self.loginWorkers = loginWorkers
        self.loginQueue = loginQueue
        self.shutdownGrace = shutdownGrace
    }
}

/// The HTTP face of a Relata data server: version 1 of the protocol
/// (`POST /v2/{service}/{method}`, JSON in and out) and `GET /health`.
///
/// ```swift
/// let app = RelataHTTPServer.application(services: services, configuration: ServerConfiguration(port: 7099))
/// try await app.runService()   // stops gracefully on SIGINT and SIGTERM
/// ```
public enum RelataHTTPServer {
    /// The protocol version this server speaks.
    ///
    /// Version 2: an UpdateData change carries the user's edits (``Relata/DeltaChange/edits``),
    /// which the server replays; version 1 clients sent values their rules had made, which a
    /// server replaying rules would change again, so they are refused (410, `unsupportedProtocol`).
    public static let protocolVersion = 2

    public static func application(services: ServerServices, configuration: ServerConfiguration, logger: Logger = Logger(label: "relata.server"),
                                   onServerRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        let router = Router(context: RelataRequestContext.self)
        router.add(middleware: LogRequestsMiddleware(.info))
        router.get("health") { _, _ in
            try json(["status": "ok", "protocol": "v\(protocolVersion)"], status: .ok)
        }
        let openAPI = (try? JSONSerialization.data(withJSONObject: OpenAPIDocument.make(for: services), options: [.sortedKeys])) ?? Data("{}".utf8)
        router.get("openapi.json") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: openAPI)))
        }
        for domain in services.domains {
            domain.login.passwordChecks.setLimits(workers: configuration.loginWorkers, waiting: configuration.loginQueue)
        }
        let bodies = BodyBudget(total: configuration.maxBodyBytesInFlight)
        router.post("v1/:service/:method") { _, _ in
            errorResponse(for: ProtocolError.oldProtocol(
                "this server speaks protocol v\(protocolVersion), not v1: a v1 client sends the values its rules made, which the server's rules would change a second time; update the client"),
                logger: logger)
        }
        router.post("v\(protocolVersion)/:service/:method") { request, context in
            let service = context.parameters.get("service") ?? ""
            let method = context.parameters.get("method") ?? ""
            var logger = context.logger
            logger[metadataKey: "service"] = "\(service)/\(method)"
            do {
                var response = try await bodies.withLease { lease in
                    try await handle(service: service, method: method, request: request, context: context,
                                     services: services, configuration: configuration, lease: lease)
                }
                response.headers[.init("x-request-id")!] = context.id
                return response
            } catch {
                var response = errorResponse(for: error, logger: logger)
                response.headers[.init("x-request-id")!] = context.id
                return response
            }
        }
        return Application(router: router,
                           server: .http1(configuration: .init(additionalChannelHandlers: [ClientGoneHandler()],
                                                               idleTimeout: configuration.idleTimeout.timeAmount)),
                           configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "relata"),
                           onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? configuration.port) },
                           logger: logger)
    }

    /// Runs a server until SIGINT or SIGTERM: requests in flight get
    /// ``ServerConfiguration/shutdownGrace`` to finish, then are cancelled; the databases are
    /// closed last. The stop completes within seconds even when a database has gone.
    ///
    /// ```swift
    /// try await RelataHTTPServer.run(services: services, configuration: ServerConfiguration(port: 7099))
    /// ```
    public static func run(services: ServerServices, configuration: ServerConfiguration, logger: Logger = Logger(label: "relata.server"),
                           onServerRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }) async throws {
        let app = application(services: services, configuration: configuration, logger: logger, onServerRunning: onServerRunning)
        var group = ServiceGroupConfiguration(services: [.init(service: app)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        group.maximumGracefulShutdownDuration = configuration.shutdownGrace
        group.maximumCancellationDuration = .seconds(5)
        defer { services.close() }
        try await ServiceGroup(configuration: group).run()
    }

    private static func handle(service: String, method: String, request: Request, context: RelataRequestContext,
                               services: ServerServices, configuration: ServerConfiguration, lease: BodyBudget.Lease) async throws -> Response {
        if service == "LoginService" {
            switch method {
            case "Login":
                let body = try await readBody(request, limit: configuration.maxBodyBytesBeforeSession, within: configuration.bodyTimeout, lease: lease)
                let message = try decode(ProtocolMessages.LoginRequest.self, from: body)
                let login = try LoginString(message.loginString)
                let domain = try services.domain(named: login.domain)
                let provider = domain.login
                let domainName = domain.name
                // The throttle's queries off the cooperative pool; the slow password hash on PasswordChecks' own workers.
                let checked: LoginService.Check
                do {
                    checked = try await provider.check(login, in: domainName)
                } catch is PasswordChecks.Full {
                    throw ProtocolError.busy("too many logins are being checked; try again in a second", retryAfter: 1)
                }
                let wrong = ProtocolError.loginFailed("the user name or the password is wrong")
                var authenticated: Session
                switch checked {
                case .accepted(let session): authenticated = session
                case .refused: throw wrong
                case .unknownUser(let wait):
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
                return try json(ProtocolMessages.LoginAnswer(token: token, session: session))
            case "Logout":
                if let token = bearerToken(request) {
                    let sessions = services.sessions
                    try await OffCooperativePool.run { try sessions.end(token) }
                }
                return try json([String: String]())
            default:
                throw ProtocolError.notFound("LoginService has no method '\(method)' (methods: Login, Logout)")
            }
        }
        // The session first: a request without one is refused before its body is read.
        let sessions = services.sessions
        guard let token = bearerToken(request), let session = try await OffCooperativePool.run({ try sessions.session(for: token) }) else {
            throw ProtocolError.sessionNotFound("no session: log in (LoginService/Login) and send the token as 'Authorization: Bearer …'; a session ends after a logout or when it expires")
        }
        guard let domain = try? services.domain(named: session.values["Domain"]?.stringValue) else {
            throw ProtocolError.sessionNotFound("the session's domain is no longer served: log in again")
        }
        let body = try await readBody(request, limit: configuration.maxBodyBytes, within: configuration.bodyTimeout, lease: lease)
        let dataService = try domain.dataService(named: service)
        let (schema, version) = dataService.versionedSchema
        switch method {
        case "GetSchema":
            return try json(ProtocolMessages.SchemaAnswer(schema: schema, version: version,
                                                          allowed: dataService.permissions.allowedOperations(of: schema, for: session),
                                                          rolesAllowed: dataService.permissions.rolesAllowedForRefusedOperations(of: schema, for: session)))
        case "GetData":
            let message = try decode(ProtocolMessages.GetDataRequest.self, from: body)
            let read = try await dataService.checkRead(message.requests, session: session)
            let binary = request.headers[.accept]?.contains(RowStream.contentType) == true
            return try await GetDataAnswer.response(for: read, from: dataService, schema: message.includeSchema == true ? .init(schema: schema, version: version) : nil,
                                                    binary: binary, writeTimeout: configuration.writeTimeout, context: context)
        case "UpdateData":
            let validated = request.headers.first(where: { $0.name.canonicalName == rulesVersionHeader })?.value
            let message: (apply: ApplyId?, deltas: [Delta])
            do {
                message = try DeltaJSON.decodeRequest(body)
            } catch let error as RelataError where error.code == .invalidDelta {
                throw ProtocolError.badRequest(error.message)
            }
            let processed = try DeltaJSON.encode(try await dataService.updateData(message.deltas, session: session, apply: message.apply, rulesVersion: validated))
            return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: processed)))
        case "ExecuteCommand":
            let message = try decode(ProtocolMessages.CommandRequest.self, from: body)
            let (result, deltas) = try await dataService.executeCommand(message.command, parameters: message.parameters ?? [:], session: session)
            return try json(ProtocolMessages.CommandAnswer(result: result, deltas: deltas))
        case "SQLGetData":
            let message = try decode(ProtocolMessages.SQLGetDataRequest.self, from: body)
            let read = try await dataService.checkRead([message.dataRequest], session: session)
            let binary = request.headers[.accept]?.contains(RowStream.contentType) == true
            return try await GetDataAnswer.response(for: read, from: dataService, schema: nil, binary: binary,
                                                    writeTimeout: configuration.writeTimeout, context: context)
        default:
            throw ProtocolError.notFound("DataService has no method '\(method)' (methods: GetSchema, GetData, UpdateData, ExecuteCommand, SQLGetData)")
        }
    }

    /// The rules version a client validated its changes with (`X-Relata-Rules-Version`).
    static let rulesVersionHeader = "x-relata-rules-version"

    /// The request's body, at most `limit` bytes (413 beyond), arriving within `timeout` (408
    /// after), its bytes taken from the server's budget for bodies as they arrive (503 when
    /// the bodies held would go past it).
    private static func readBody(_ request: Request, limit: Int, within timeout: Duration, lease: BodyBudget.Lease) async throws -> Data {
        do {
            return try await withThrowingTaskGroup(of: Data?.self) { group in
                group.addTask {
                    var body = Data()
                    for try await chunk in request.body {
                        guard chunk.readableBytes <= limit - body.count else {
                            throw ProtocolError.tooLarge("the request body is larger than \(limit) bytes")
                        }
                        try lease.take(chunk.readableBytes)
                        body.append(contentsOf: chunk.readableBytesView)
                    }
                    return body
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let body = first else {
                    throw ProtocolError.timedOut("the request body did not arrive within \(timeout)")
                }
                return body
            }
        } catch is BodyBudget.Exhausted {
            throw ProtocolError.busy("the server holds as many request bodies as it may; try again in a second", retryAfter: 1)
        }
    }

    private static func decode<Message: Decodable>(_ type: Message.Type, from body: Data) throws -> Message {
        do {
            return try JSONDecoder().decode(type, from: body)
        } catch let error as DecodingError {
            throw ProtocolError.badRequest(ProtocolError.describe(error))
        }
    }

    private static func bearerToken(_ request: Request) -> String? {
        guard let value = request.headers[.authorization], value.hasPrefix("Bearer ") else { return nil }
        return String(value.dropFirst("Bearer ".count)).trimmingCharacters(in: .whitespaces)
    }

    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        Response(status: status, headers: [.contentType: "application/json; charset=utf-8"],
                 body: ResponseBody(byteBuffer: ByteBuffer(bytes: try encode(value))))
    }

    /// A message as the protocol's JSON.
    static func encode(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    /// Every error as a JSON answer with the right status; nothing reaches the client as a bare 500.
    static func errorResponse(for error: any Error, logger: Logger) -> Response {
        let (status, answer, retryAfter) = errorAnswer(for: error, logger: logger)
        var response = (try? json(answer, status: status)) ?? Response(status: .internalServerError)
        if let retryAfter { response.headers[.retryAfter] = String(retryAfter) }
        // A body that never arrived leaves the connection in no state to read another request.
        if status == .requestTimeout { response.headers[.connection] = "close" }
        return response
    }

    /// The protocol's error answer for an error, its HTTP status, and for a refusal that may
    /// succeed later, the seconds to wait (`Retry-After`).
    static func errorAnswer(for error: any Error, logger: Logger) -> (HTTPResponse.Status, ProtocolMessages.ErrorAnswer, retryAfter: Int?) {
        let status: HTTPResponse.Status
        let details: ProtocolMessages.ErrorAnswer.Details
        var retryAfter: Int?
        switch error {
        case let error as ProtocolError:
            status = error.status
            details = .init(code: error.code, message: error.message)
            if case .busy(_, let seconds) = error { retryAfter = seconds }
        case let error as LoginService.LockedOut:
            status = .tooManyRequests
            details = .init(code: "lockedOut", message: "too many failed logins for this user; try again in \(error.retryAfter) s")
            retryAfter = error.retryAfter
        case let error as WorkLimit.Exceeded:
            status = .badRequest
            details = .init(code: RelataError.Code.timeLimitExceeded.rawValue,
                            message: "computing the answer ran longer than \(error.timeLimit) and was stopped; narrow the request")
        case let error as SQLError where error.kind == .unavailable || error.kind == .serializationFailure:
            status = .serviceUnavailable
            details = .init(code: "unavailable", message: "the database cannot take the request now: \(error.message)")
            retryAfter = 1
            logger.warning("database unavailable: \(error.message)")
        case let error as RelataError where error.code == .permissionDenied:
            status = .forbidden
            details = .init(code: error.code.rawValue, message: error.message, table: error.table)
        case let error as RelataError where [.staleRules, .applyIdReused, .applyIdExpired].contains(error.code):
            status = .conflict
            details = .init(code: error.code.rawValue, message: error.message)
        case let error as RelataError:
            status = .badRequest
            details = .init(code: error.code.rawValue, message: error.message, table: error.table, field: error.field, location: error.location)
        case let error as ScriptError where error.kind == .ruleFailed:
            status = .forbidden
            details = .init(code: "refused", message: error.message, table: error.table, location: error.location, event: error.event)
        case let error as ScriptError:
            status = .internalServerError
            details = .init(code: "ruleError", message: error.message, table: error.table, location: error.location, event: error.event)
            logger.error("a rule is broken: \(error)")
        default:
            // The detail stays in the log: an internal error's text can name files, tables and the server's setup.
            let request = logger[metadataKey: "hb.request.id"].map { "\($0)" } ?? "unknown"
            status = .internalServerError
            details = .init(code: "internal", message: "internal error; the server's log has the detail under request id \(request)")
            logger.error("request failed: \(error)")
        }
        return (status, ProtocolMessages.ErrorAnswer(error: details), retryAfter)
    }
}

/// A request the protocol itself refuses, with its HTTP status.
enum ProtocolError: Error {
    case badRequest(String), loginFailed(String), sessionNotFound(String), notFound(String), tooLarge(String)
    case timedOut(String)
    /// A request of a protocol version this server no longer speaks.
    case oldProtocol(String)
    /// The server is too busy for the request now; the client may retry after `retryAfter` seconds.
    case busy(String, retryAfter: Int)

    var status: HTTPResponse.Status {
        switch self {
        case .badRequest: return .badRequest
        case .loginFailed, .sessionNotFound: return .unauthorized
        case .notFound: return .notFound
        case .tooLarge: return .contentTooLarge
        case .timedOut: return .requestTimeout
        case .busy: return .serviceUnavailable
        case .oldProtocol: return .gone
        }
    }

    var code: String {
        switch self {
        case .badRequest: return "badRequest"
        case .loginFailed: return "loginFailed"
        case .sessionNotFound: return "sessionNotFound"
        case .notFound: return "notFound"
        case .tooLarge: return "tooLarge"
        case .timedOut: return "timedOut"
        case .busy: return "busy"
        case .oldProtocol: return "unsupportedProtocol"
        }
    }

    var message: String {
        switch self {
        case .badRequest(let text), .loginFailed(let text), .sessionNotFound(let text), .notFound(let text), .tooLarge(let text),
             .timedOut(let text), .busy(let text, _), .oldProtocol(let text): return text
        }
    }

    /// A decoding error as a person reads it: where in the JSON, and what was wrong.
    static func describe(_ error: DecodingError) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            codingPath.isEmpty ? "the body" : codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        }
        switch error {
        case .dataCorrupted(let context): return "\(path(context.codingPath)): \(context.debugDescription)"
        case .keyNotFound(let key, let context): return "\(path(context.codingPath)): '\(key.stringValue)' is missing"
        case .typeMismatch(let type, let context): return "\(path(context.codingPath)): expected \(type)"
        case .valueNotFound(let type, let context): return "\(path(context.codingPath)): expected \(type), found null"
        @unknown default: return "\(error)"
        }
    }
}

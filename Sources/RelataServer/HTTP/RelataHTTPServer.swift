import Foundation
import Hummingbird
import Logging
import NIOCore
import Relata
import RelataScript

/// Where and how the server listens.
public struct ServerConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// The largest request body accepted (a larger one is answered 413).
    public var maxBodyBytes: Int

    public init(host: String = "127.0.0.1", port: Int = 7099, maxBodyBytes: Int = 32 << 20) {
        self.host = host
        self.port = port
        self.maxBodyBytes = maxBodyBytes
    }
}

/// The HTTP face of a Relata data server: version 1 of the protocol
/// (`POST /v1/{service}/{method}`, JSON in and out) and `GET /health`.
///
/// ```swift
/// let app = RelataHTTPServer.application(services: services, configuration: ServerConfiguration(port: 7099))
/// try await app.runService()   // stops gracefully on SIGINT and SIGTERM
/// ```
public enum RelataHTTPServer {
    /// The protocol version this server speaks.
    public static let protocolVersion = 1

    public static func application(services: ServerServices, configuration: ServerConfiguration, logger: Logger = Logger(label: "relata.server"),
                                   onServerRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        let router = Router()
        router.add(middleware: LogRequestsMiddleware(.info))
        router.get("health") { _, _ in
            try json(["status": "ok", "protocol": "v\(protocolVersion)"], status: .ok)
        }
        let openAPI = (try? JSONSerialization.data(withJSONObject: OpenAPIDocument.make(for: services), options: [.sortedKeys])) ?? Data("{}".utf8)
        router.get("openapi.json") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: openAPI)))
        }
        router.post("v1/:service/:method") { request, context in
            let service = context.parameters.get("service") ?? ""
            let method = context.parameters.get("method") ?? ""
            var logger = context.logger
            logger[metadataKey: "service"] = "\(service)/\(method)"
            do {
                var response = try await handle(service: service, method: method, request: request, context: context,
                                                 services: services, configuration: configuration)
                response.headers[.init("x-request-id")!] = context.id
                return response
            } catch {
                var response = errorResponse(for: error, logger: logger)
                response.headers[.init("x-request-id")!] = context.id
                return response
            }
        }
        return Application(router: router,
                           configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "relata"),
                           onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? configuration.port) },
                           logger: logger)
    }

    private static func handle(service: String, method: String, request: Request, context: BasicRequestContext,
                               services: ServerServices, configuration: ServerConfiguration) async throws -> Response {
        let body = try await readBody(request, limit: configuration.maxBodyBytes)
        if service == "LoginService" {
            switch method {
            case "Login":
                let message = try decode(ProtocolMessages.LoginRequest.self, from: body)
                let login = try LoginString(message.loginString)
                let domain = try services.domain(named: login.domain)
                let provider = domain.login
                // The throttle's queries and the slow password hash: off the cooperative pool too.
                guard var authenticated = try await OffCooperativePool.run({ try provider.authenticate(login) }) else {
                    throw ProtocolError.loginFailed("the user name or the password is wrong")
                }
                authenticated.values["Domain"] = .string(domain.name)
                let dataService = try domain.dataService(named: login.schema.map { "DataService.\($0)" } ?? "DataService")
                let session = try await dataService.afterLogin(user: login.user, session: authenticated)
                let sessions = services.sessions
                let token = try await OffCooperativePool.run { try sessions.start(session) }
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
        let sessions = services.sessions
        guard let token = bearerToken(request), let session = try await OffCooperativePool.run({ try sessions.session(for: token) }) else {
            throw ProtocolError.sessionNotFound("no session: log in (LoginService/Login) and send the token as 'Authorization: Bearer …'; a session ends after a logout or when it expires")
        }
        guard let domain = try? services.domain(named: session.values["Domain"]?.stringValue) else {
            throw ProtocolError.sessionNotFound("the session's domain is no longer served: log in again")
        }
        let dataService = try domain.dataService(named: service)
        let (schema, version) = dataService.versionedSchema
        switch method {
        case "GetSchema":
            return try json(ProtocolMessages.SchemaAnswer(schema: schema, version: version))
        case "GetData":
            let message = try decode(ProtocolMessages.GetDataRequest.self, from: body)
            let read = try await dataService.checkRead(message.requests, session: session)
            let binary = request.headers[.accept]?.contains(RowStream.contentType) == true
            return try GetDataAnswer.response(for: read, from: dataService, schema: message.includeSchema == true ? .init(schema: schema, version: version) : nil,
                                              binary: binary, logger: context.logger)
        case "UpdateData":
            if let validated = request.headers.first(where: { $0.name.canonicalName == rulesVersionHeader })?.value, validated != version {
                throw ProtocolError.staleRules("the changes were validated with rules \(validated); the server's rules are now \(version): download the schema (GetSchema), validate again and resend")
            }
            let deltas: [Delta]
            do {
                deltas = try DeltaJSON.decode(body)
            } catch let error as RelataError where error.code == .invalidDelta {
                throw ProtocolError.badRequest(error.message)
            }
            let processed = try DeltaJSON.encode(try await dataService.updateData(deltas, session: session))
            return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: processed)))
        case "ExecuteCommand":
            let message = try decode(ProtocolMessages.CommandRequest.self, from: body)
            let (result, deltas) = try await dataService.executeCommand(message.command, parameters: message.parameters ?? [:], session: session)
            return try json(ProtocolMessages.CommandAnswer(result: result, deltas: deltas))
        case "SQLGetData":
            let message = try decode(ProtocolMessages.SQLGetDataRequest.self, from: body)
            let read = try await dataService.checkRead([message.dataRequest], session: session)
            let binary = request.headers[.accept]?.contains(RowStream.contentType) == true
            return try GetDataAnswer.response(for: read, from: dataService, schema: nil, binary: binary, logger: context.logger)
        default:
            throw ProtocolError.notFound("DataService has no method '\(method)' (methods: GetSchema, GetData, UpdateData, ExecuteCommand, SQLGetData)")
        }
    }

    /// The rules version a client validated its changes with (`X-Relata-Rules-Version`).
    static let rulesVersionHeader = "x-relata-rules-version"

    private static func readBody(_ request: Request, limit: Int) async throws -> Data {
        do {
            let buffer = try await request.body.collect(upTo: limit)
            return Data(buffer.readableBytesView)
        } catch is NIOTooManyBytesError {
            throw ProtocolError.tooLarge("the request body is larger than \(limit) bytes")
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
        let (status, answer) = errorAnswer(for: error, logger: logger)
        return (try? json(answer, status: status)) ?? Response(status: .internalServerError)
    }

    /// The protocol's error answer for an error, and its HTTP status.
    static func errorAnswer(for error: any Error, logger: Logger) -> (HTTPResponse.Status, ProtocolMessages.ErrorAnswer) {
        let status: HTTPResponse.Status
        let details: ProtocolMessages.ErrorAnswer.Details
        switch error {
        case let error as ProtocolError:
            status = error.status
            details = .init(code: error.code, message: error.message)
        case let error as LoginService.LockedOut:
            status = .tooManyRequests
            details = .init(code: "lockedOut", message: "too many failed logins for this user; try again in \(error.retryAfter) s")
        case let error as RelataError where error.code == .permissionDenied:
            status = .forbidden
            details = .init(code: error.code.rawValue, message: error.message, table: error.table)
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
            status = .internalServerError
            details = .init(code: "internal", message: "the server failed: \(error)")
            logger.error("request failed: \(error)")
        }
        return (status, ProtocolMessages.ErrorAnswer(error: details))
    }
}

/// A request the protocol itself refuses, with its HTTP status.
enum ProtocolError: Error {
    case badRequest(String), loginFailed(String), sessionNotFound(String), notFound(String), tooLarge(String)
    case staleRules(String)

    var status: HTTPResponse.Status {
        switch self {
        case .badRequest: return .badRequest
        case .loginFailed, .sessionNotFound: return .unauthorized
        case .notFound: return .notFound
        case .tooLarge: return .contentTooLarge
        case .staleRules: return .conflict
        }
    }

    var code: String {
        switch self {
        case .badRequest: return "badRequest"
        case .loginFailed: return "loginFailed"
        case .sessionNotFound: return "sessionNotFound"
        case .notFound: return "notFound"
        case .tooLarge: return "tooLarge"
        case .staleRules: return "staleRules"
        }
    }

    var message: String {
        switch self {
        case .badRequest(let text), .loginFailed(let text), .sessionNotFound(let text), .notFound(let text), .tooLarge(let text),
             .staleRules(let text): return text
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

import Foundation
import Hummingbird
import Logging
import NIOCore
import Relata
import RelataScript
import ServiceLifecycle

/// The HTTP face of a Relata data server: version 2 of the protocol
/// (`POST /v2/{service}/{method}`, JSON in and out), `GET /health`, `/health/ready` and
/// `/metrics` (``ServerMetrics``), `AdminService` for the configured admin roles, and the web
/// console at `/`, with a log line per request and audit events (``AuditEvent``).
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

    /// The server as a Hummingbird application: every request logged and counted in `metrics`
    /// once answered (``RequestLogMiddleware``); `GET /health`, `/health/live`, `/health/ready`,
    /// `/metrics` and `/openapi.json`; under
    /// `/v2`, each request takes its share of the budget for bodies; `LoginService` is open to
    /// anyone; every data service's route is reached only through ``SessionMiddleware``, the one
    /// place that decides who may call it.
    public static func application(services: ServerServices, configuration: ServerConfiguration, metrics: ServerMetrics = ServerMetrics(),
                                   logger: Logger = Logger(label: "relata.server"),
                                   onServerRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        let router = Router(context: RelataRequestContext.self)
        let refusals = RecentRefusals()
        router.addMiddleware {
            RequestLogMiddleware(metrics: metrics, refusals: refusals)
            CORSMiddleware(policy: configuration.cors)
            ProtocolErrorMiddleware()
        }
        let health = HealthRoutes(services: services, metrics: metrics)
        health.add(to: router)
        WebRoutes().add(to: router)
        let openAPI = (try? JSONSerialization.data(withJSONObject: OpenAPIDocument.make(for: services), options: [.sortedKeys])) ?? Data("{}".utf8)
        router.get("openapi.json") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: openAPI)))
        }
        for domain in services.domains {
            domain.login.passwordChecks.setLimits(workers: configuration.loginWorkers, waiting: configuration.loginQueue)
        }
        router.post("v1/:service/:method") { _, _ -> Response in
            throw ProtocolError.oldProtocol(
                "this server speaks protocol v\(protocolVersion), not v1: a v1 client sends the values its rules made, which the server's rules would change a second time; update the client")
        }
        let api = router.group("v\(protocolVersion)").add(middleware: BodyBudgetMiddleware(budget: BodyBudget(total: configuration.maxBodyBytesInFlight)))
        LoginRoutes(services: services, configuration: configuration).add(to: api.group("LoginService"))
        AdminRoutes(services: services, configuration: configuration, health: health, refusals: refusals, started: Date())
            .add(to: api.group("AdminService").add(middleware: SessionMiddleware(services: services)))
        DataServiceRoutes(configuration: configuration).add(to: api.group(":service")
            .add(middleware: SessionMiddleware(services: services))
            .group(context: SessionContext.self))
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
    public static func run(services: ServerServices, configuration: ServerConfiguration, metrics: ServerMetrics = ServerMetrics(),
                           logger: Logger = Logger(label: "relata.server"),
                           onServerRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }) async throws {
        let schemas = services.domains.flatMap { domain in domain.dataServices.values.map { "\(domain.name)/\($0.storage.schema.name)" } }.sorted()
        let app = application(services: services, configuration: configuration, metrics: metrics, logger: logger) { port in
            logger.audit(.started, "the server started", metadata: [
                "address": .string("\(configuration.host):\(port)"), "protocol": "v\(protocolVersion)",
                "schemas": .string(schemas.joined(separator: ",")), "pid": .stringConvertible(Int(ProcessInfo.processInfo.processIdentifier)),
            ])
            await onServerRunning(port)
        }
        var group = ServiceGroupConfiguration(services: [.init(service: app)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        group.maximumGracefulShutdownDuration = configuration.shutdownGrace
        group.maximumCancellationDuration = .seconds(5)
        let started = ContinuousClock.now
        defer {
            services.close()
            logger.audit(.stopped, "the server stopped", metadata: ["uptime_s": .stringConvertible(Int((ContinuousClock.now - started).components.seconds))])
        }
        try await ServiceGroup(configuration: group).run()
    }

    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        Response(status: status, headers: [.contentType: "application/json; charset=utf-8"],
                 body: ResponseBody(byteBuffer: ByteBuffer(bytes: try encode(value))))
    }

    /// A message as the protocol's JSON (a `Date` outside field values as ISO 8601 text).
    static func encode(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return try encoder.encode(value)
    }
}

import Foundation
import Hummingbird
import Relata

/// `AdminService`: what an administrator of a domain needs to see — the server's health, the
/// domain's sessions, and the refusals its users met lately. Only a session with one of the
/// configured admin roles (``ServerConfiguration/adminRoles``, `console.adminRoles`) may call it;
/// it shows that session's own domain only, and never a session's token.
struct AdminRoutes {
    let services: ServerServices
    let configuration: ServerConfiguration
    let health: HealthRoutes
    let refusals: RecentRefusals
    /// When this server instance started.
    let started: Date

    /// `AdminService/Overview`'s answer.
    struct Overview: Encodable, Sendable {
        struct Server: Encodable, Sendable {
            let `protocol`: String
            let started: Date
            let uptimeSeconds: Int
        }
        let server: Server
        let domain: String
        let health: HealthRoutes.Readiness
        /// The domain's sessions that have not expired, oldest first.
        let sessions: [SessionStore.Listing]
        /// The refusals this instance answered to the domain's users, newest first.
        let refusals: [RecentRefusals.Refusal]
    }

    func add(to group: RouterGroup<RelataRequestContext>) {
        group.post("Overview", use: overview)
        group.post(":method") { _, context -> Response in
            throw ProtocolError.notFound("AdminService has no method '\(context.parameters.get("method") ?? "")' (methods: Overview)")
        }
    }

    @Sendable func overview(_ request: Request, context: RelataRequestContext) async throws -> Response {
        context.record.note { $0.service = "AdminService" }
        guard let (session, domain) = context.authenticated else {
            throw ProtocolError.noSession
        }
        guard configuration.isAdmin(session) else {
            let named = configuration.adminRoles.isEmpty ? "this server names none" : "[\(configuration.adminRoles.joined(separator: ", "))]"
            throw RelataError(.permissionDenied, "AdminService is for the roles console.adminRoles names (\(named)); this session's roles are [\(session.roles.joined(separator: ", "))]")
        }
        _ = try await context.body(of: request, limit: configuration.maxBodyBytesBeforeSession, within: configuration.bodyTimeout)
        let sessions = services.sessions
        async let listed = OffCooperativePool.run { try sessions.list() }
        let readiness = await health.readiness()
        let now = Date()
        return try RelataHTTPServer.json(Overview(
            server: .init(protocol: "v\(RelataHTTPServer.protocolVersion)", started: started, uptimeSeconds: Int(now.timeIntervalSince(started))),
            domain: domain.name, health: readiness,
            sessions: try await listed.filter { $0.domain == domain.name },
            refusals: refusals.list(domain: domain.name)))
    }
}

import Foundation
import Hummingbird
import NIOCore

/// `GET /health` and `/health/live` (liveness: the process answers), `GET /health/ready`
/// (readiness: every database answers a query within two seconds, and every schema's rules are
/// loaded — 503 naming what is not), and `GET /metrics` (Prometheus's text format, ``ServerMetrics``).
/// None needs a session, and none says more than a load balancer or a scraper needs.
struct HealthRoutes {
    let services: ServerServices
    let metrics: ServerMetrics

    /// How long readiness waits for a database.
    static let databaseWait: Duration = .seconds(2)

    func add(to router: Router<RelataRequestContext>) {
        router.get("health") { _, _ in try Self.live() }
        router.get("health/live") { _, _ in try Self.live() }
        router.get("health/ready") { _, _ in try await ready() }
        router.get("metrics") { _, _ in
            guard let text = await metrics.prometheusText(services) else {
                throw ProtocolError.notFound("this server sends its metrics to another backend, not /metrics")
            }
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: text)))
        }
    }

    private static func live() throws -> Response {
        try RelataHTTPServer.json(["status": "ok", "protocol": "v\(RelataHTTPServer.protocolVersion)"])
    }

    /// Whether each database answers and each schema's rules are loaded.
    struct Readiness: Encodable, Sendable {
        struct Check: Encodable, Sendable { let name: String; let ready: Bool; var problem: String?; var rulesVersion: String? }
        let status: String
        let checks: [Check]
        var ready: Bool { status == "ready" }
    }

    private func ready() async throws -> Response {
        let readiness = await readiness()
        return try RelataHTTPServer.json(readiness, status: readiness.ready ? .ok : .serviceUnavailable)
    }

    /// Each database checked at once; each check given at most ``databaseWait``.
    func readiness() async -> Readiness {
        var targets: [(name: String, database: any SQLDatabase, service: DataService?)] = [("sessions", services.sessions.database, nil)]
        for domain in services.domains {
            for service in domain.dataServices.values.sorted(by: { $0.storage.schema.name < $1.storage.schema.name }) {
                targets.append(("\(domain.name)/\(service.storage.schema.name)", service.storage.database, service))
            }
        }
        let problems = await withTaskGroup(of: (Int, String?).self) { group in
            for (index, target) in targets.enumerated() {
                group.addTask { (index, await Self.problem(reaching: target.database)) }
            }
            var problems = [String?](repeating: nil, count: targets.count)
            for await (index, problem) in group { problems[index] = problem }
            return problems
        }
        let checks = targets.enumerated().map { index, target in
            Readiness.Check(name: target.name, ready: problems[index] == nil, problem: problems[index],
                            rulesVersion: target.service.map { String($0.versionedSchema.version.prefix(19)) })
        }
        return Readiness(status: checks.allSatisfy(\.ready) ? "ready" : "notReady", checks: checks)
    }

    /// Why a database cannot be reached, or nil when it answers `SELECT 1` in time. A database
    /// that hangs is reported after ``databaseWait`` (its check is left to end by itself).
    private static func problem(reaching database: any SQLDatabase) async -> String? {
        let answer = FirstAnswer()
        return await withCheckedContinuation { continuation in
            answer.set(continuation)
            Task {
                do {
                    _ = try await database.asyncRead { connection in try connection.execute("SELECT 1", []) }
                    answer.give(nil)
                } catch {
                    answer.give("the database did not answer: \(error)")
                }
            }
            Task {
                try? await Task.sleep(for: databaseWait)
                answer.give("the database did not answer within \(databaseWait)")
            }
        }
    }
}

/// Resumes a continuation with the first answer given; later ones are dropped.
private final class FirstAnswer: @unchecked Sendable {
    // @unchecked Sendable: `continuation` is read and written only while `lock` is held.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<String?, Never>?

    func set(_ continuation: CheckedContinuation<String?, Never>) {
        lock.withLock { self.continuation = continuation }
    }

    func give(_ answer: String?) {
        let waiting: CheckedContinuation<String?, Never>? = lock.withLock {
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(returning: answer)
    }
}

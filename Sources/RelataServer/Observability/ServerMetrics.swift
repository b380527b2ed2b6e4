import CoreMetrics
import Foundation
import Prometheus
import Relata
import RelataScript

/// The server's metrics, recorded through swift-metrics and shown at `GET /metrics` in
/// Prometheus's text format:
///
/// | metric | labels | what |
/// |---|---|---|
/// | `relata_requests_total` | service, method, status | requests answered |
/// | `relata_request_duration_seconds` | service, method | latency histogram, to the answer's last byte |
/// | `relata_applies_total` | outcome (`resolved`, `failed`, `refused`) | UpdateData requests: every change resolved, some failed, or the request refused |
/// | `relata_changes_total` | verdict (`resolved` or a failure kind) | changes of applies and commands |
/// | `relata_rule_failures_total` | kind (`refusal`, `ruleError`) | changes and requests a rule failed |
/// | `relata_time_limit_stops_total` | what (`query`, `script`) | reads and scripts stopped by their time limit |
/// | `relata_login_failures_total` | reason (`wrongCredentials`, `lockedOut`, `busy`) | logins refused |
/// | `relata_rule_runtimes` / `relata_rule_runtimes_busy` | domain, schema | rule runtimes, and those running a unit of work |
/// | `relata_database_connections_in_use` | database | connections lent out (`sessions`, or `domain/schema`) |
///
/// Label values come only from what the server serves — never from a request's path as sent —
/// so a client cannot grow the metrics without end.
///
/// ```swift
/// let metrics = ServerMetrics()
/// let app = RelataHTTPServer.application(services: services, configuration: configuration, metrics: metrics)
/// // curl http://127.0.0.1:7099/metrics
/// ```
public final class ServerMetrics: Sendable {
    /// Where the metrics are recorded.
    public let factory: any MetricsFactory
    /// The registry `/metrics` shows; nil when the metrics go to another backend.
    let registry: PrometheusCollectorRegistry?
    private let scriptStopsSeen = StopsSeen(ScriptEngine.timeLimitStops)

    /// Metrics kept in a registry of their own, shown at `/metrics`.
    public convenience init() {
        self.init(prometheus: PrometheusCollectorRegistry())
    }

    /// Metrics kept in `registry`, shown at `/metrics` (with whatever else it holds).
    public init(prometheus registry: PrometheusCollectorRegistry) {
        self.registry = registry
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [.milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
                                                   .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
                                                   .seconds(1), .seconds(2), .seconds(5), .seconds(10), .seconds(30)]
        self.factory = factory
        startCounters()
    }

    /// Metrics sent to another backend (StatsD, OpenTelemetry, …); `/metrics` then answers 404.
    public init(factory: any MetricsFactory) {
        self.factory = factory
        registry = nil
        startCounters()
    }

    /// The counters whose labels are known in advance, at zero: a dashboard's rate of refusals
    /// is then 0 rather than missing until the first one.
    private func startCounters() {
        let known: [(String, String, [String])] = [
            ("relata_applies_total", "outcome", ["resolved", "failed", "refused"]),
            ("relata_rule_failures_total", "kind", ["refusal", "ruleError"]),
            ("relata_time_limit_stops_total", "what", ["query", "script"]),
            ("relata_login_failures_total", "reason", ["wrongCredentials", "lockedOut", "busy"]),
        ]
        for (label, dimension, values) in known {
            for value in values { Counter(label: label, dimensions: [(dimension, value)], factory: factory).increment(by: 0) }
        }
    }

    /// Records a request that ended.
    func requestEnded(service: String, method: String, status: Int, duration: Duration, facts: RequestRecord.Facts) {
        Counter(label: "relata_requests_total", dimensions: [("service", service), ("method", method), ("status", String(status))],
                factory: factory).increment()
        Timer(label: "relata_request_duration_seconds", dimensions: [("service", service), ("method", method)], factory: factory)
            .recordSeconds(duration.seconds)
        for (verdict, count) in facts.changesByVerdict.sorted(by: { $0.key < $1.key }) {
            Counter(label: "relata_changes_total", dimensions: [("verdict", verdict)], factory: factory).increment(by: count)
            if verdict == FailureKind.refusal.rawValue || verdict == FailureKind.ruleError.rawValue {
                Counter(label: "relata_rule_failures_total", dimensions: [("kind", verdict)], factory: factory).increment(by: count)
            }
        }
        if method == "UpdateData" {
            let outcome = facts.errorCode != nil || status >= 400 ? "refused"
                : facts.changesByVerdict.keys.contains { $0 != "resolved" } ? "failed" : "resolved"
            Counter(label: "relata_applies_total", dimensions: [("outcome", outcome)], factory: factory).increment()
        }
        switch facts.errorCode {
        case "refused": Counter(label: "relata_rule_failures_total", dimensions: [("kind", "refusal")], factory: factory).increment()
        case "ruleError": Counter(label: "relata_rule_failures_total", dimensions: [("kind", "ruleError")], factory: factory).increment()
        case "timeLimitExceeded": Counter(label: "relata_time_limit_stops_total", dimensions: [("what", "query")], factory: factory).increment()
        default: break
        }
        switch facts.login {
        case .failed?: Counter(label: "relata_login_failures_total", dimensions: [("reason", "wrongCredentials")], factory: factory).increment()
        case .lockedOut?: Counter(label: "relata_login_failures_total", dimensions: [("reason", "lockedOut")], factory: factory).increment()
        case .busy?: Counter(label: "relata_login_failures_total", dimensions: [("reason", "busy")], factory: factory).increment()
        case .succeeded?, nil: break
        }
    }

    /// Records what is measured by looking rather than counted as it happens: runtimes busy,
    /// connections in use, scripts the time limit stopped.
    func sample(_ services: ServerServices) async {
        for domain in services.domains {
            for service in domain.dataServices.values.sorted(by: { $0.storage.schema.name < $1.storage.schema.name }) {
                let schema = service.storage.schema.name
                let pool = service.rules.value.pool
                Gauge(label: "relata_rule_runtimes", dimensions: [("domain", domain.name), ("schema", schema)], factory: factory)
                    .record(pool.size)
                Gauge(label: "relata_rule_runtimes_busy", dimensions: [("domain", domain.name), ("schema", schema)], factory: factory)
                    .record(await pool.busy)
                Gauge(label: "relata_database_connections_in_use", dimensions: [("database", "\(domain.name)/\(schema)")], factory: factory)
                    .record(service.storage.database.connectionsInUse)
            }
        }
        Gauge(label: "relata_database_connections_in_use", dimensions: [("database", "sessions")], factory: factory)
            .record(services.sessions.database.connectionsInUse)
        let stops = scriptStopsSeen.advance(to: ScriptEngine.timeLimitStops)
        Counter(label: "relata_time_limit_stops_total", dimensions: [("what", "script")], factory: factory).increment(by: stops)
    }

    /// The metrics in Prometheus's text format, or nil when they go to another backend.
    func prometheusText(_ services: ServerServices) async -> [UInt8]? {
        guard let registry else { return nil }
        await sample(services)
        return registry.emitToBuffer()
    }
}

/// The process-wide count of scripts stopped, as far as the metrics have counted it.
private final class StopsSeen: @unchecked Sendable {
    // @unchecked Sendable: `seen` is read and written only while `lock` is held.
    private let lock = NSLock()
    private var seen: Int

    /// Counting from `total`: stops before the metrics began are not theirs.
    init(_ total: Int) { seen = total }

    /// How many more than last time.
    func advance(to total: Int) -> Int {
        lock.withLock {
            defer { seen = total }
            return max(0, total - seen)
        }
    }
}

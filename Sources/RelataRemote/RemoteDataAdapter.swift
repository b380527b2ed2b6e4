import Foundation
import Logging
import Relata
import RelataScript

/// Tables fetched from a Relata data server (`relata serve`), changed locally with the
/// server's own rules, and applied back — the client half of Relata.
///
/// ```swift
/// let adapter = RemoteDataAdapter(targetURL: URL(string: "http://127.0.0.1:7099")!, dataService: "DataService.PCTrade")
/// adapter.credentials = RemoteCredentials(user: "demo", password: "demo")
/// let orders = try await adapter.getDataTable("Orders", where: "ClientId = :client", parameters: ["client": 7])
/// try orders.rows[0].setValue("shipped", forKey: "Status")   // the server's beforePost runs here, too
/// let processed = try await adapter.applyChanges(for: orders)
/// ```
///
/// The adapter downloads the schema with its rule scripts on first use and holds one
/// ``DataTable`` per schema table (``tables``): fetching a table fills that table, so
/// lookups, calculated fields and the rules' `lda` see what was fetched. Rules run with
/// `isServer` false as the user edits (row events), and again just before changes are
/// sent (``validatesChangesLocally``): an edit the server would refuse fails here, with
/// the server's message and script location, before any network call.
///
/// A rule whose `lda` reads a table that was never fetched fetches it then, whole, and
/// waits for it (rules run synchronously): fetch such tables up front to keep edits quick,
/// and note that a table fetched with a where expression is what the rules see of it.
///
/// An adapter and its tables belong to the isolation that uses them (the main actor, one
/// actor, or one task): its async methods run there (`nonisolated(nonsending)`) and only
/// the network waits elsewhere. It is not `Sendable`.
public final class RemoteDataAdapter {
    /// The header that tells the server which version of the rules validated a change set.
    public static let rulesVersionHeader = "X-Relata-Rules-Version"

    /// The server's address (`http://127.0.0.1:7099`).
    ///
    /// Change it to move to another instance of the same server — after a transient failure,
    /// say, when instances share one database (see `Documentation/Deployment.md`). The session
    /// goes along: instances on one database accept each other's sessions.
    ///
    /// ```swift
    /// do {
    ///     try await adapter.applyChanges(for: orders)
    /// } catch let error as RemoteError where error.isRetryable {
    ///     adapter.targetURL = standbyURL          // the changes are still pending: send them there
    ///     try await adapter.applyChanges(for: orders)
    /// }
    /// ```
    public var targetURL: URL {
        didSet { transport = HTTPTransport(baseURL: targetURL, timeout: transport.timeout) }
    }
    /// The data service: `DataService` (the server's first schema) or `DataService.<Schema>`.
    public var dataService: String
    /// The login service's name.
    public var loginService: String
    /// Hears what the adapter does and gives credentials when a login is needed. Kept weakly.
    public weak var delegate: (any RemoteDataAdapterDelegate)?
    /// Credentials to log in with when the server asks; the delegate is asked when nil or refused.
    public var credentials: RemoteCredentials?
    /// Whether ``applyChanges(for:)-([DataTable])`` runs the server's rules locally first (on by default).
    public var validatesChangesLocally = true
    /// How many logins in a row may be refused before a call fails.
    public var maxLoginAttempts = 3
    /// The session of the current login, as the server made it (`session` in the rules).
    public internal(set) var session: Session?
    /// The schema, with its rule scripts, once downloaded.
    public var schema: SchemaDefinition? { rules?.schema }
    /// The version of the schema and scripts the local rules were built from.
    public var rulesVersion: String? { rules?.version }
    /// A batch of changes sent whose answer never came (the server may or may not have applied
    /// it): its rows stay locked, and the next apply sends it again first, with the same
    /// ``ApplyId``, so it is applied once whatever happened. Saved in briefcases.
    public internal(set) var unansweredApply: UnansweredApply?
    /// How often, and after what pauses, an apply is sent again when its answer does not come.
    public var applyRetries = ApplyRetryPolicy()
    /// Other instances of the same server, on the same database: an apply whose answer does not
    /// come is sent again to the next in turn (``targetURL`` follows the one that answered).
    public var standbyURLs: [URL] = []

    private(set) var transport: HTTPTransport
    let logger: Logger
    var token: String?
    var rules: LoadedRules?
    /// Whether the server said (`Accept-Post`, on its GetSchema and UpdateData answers) that it
    /// reads UpdateData in the binary form: applies are then sent and answered in it, else as JSON.
    var serverReadsBinaryDeltas = false

    /// Creates an adapter for a server; nothing is sent until the first call.
    ///
    /// - Parameters:
    ///   - dataService: `DataService`, or `DataService.<Schema>` to pick a schema.
    ///   - timeout: how long a request may wait for the server before it fails as transient.
    ///   - logger: where the rules' `log(...)` writes.
    public init(targetURL: URL, dataService: String = "DataService", loginService: String = "LoginService",
                timeout: TimeInterval = 60, logger: Logger = Logger(label: "relata.remote")) {
        self.targetURL = targetURL
        self.dataService = dataService
        self.loginService = loginService
        self.logger = logger
        transport = HTTPTransport(baseURL: targetURL, timeout: timeout)
    }

    /// The schema's tables, once the schema is downloaded: rows as last fetched, with the
    /// changes made since.
    public var tables: [DataTable] { rules?.adapter.tables ?? [] }

    /// The adapter's table with a name (case-insensitive), or nil before the schema is downloaded.
    public func table(named name: String) -> DataTable? {
        rules?.adapter.table(named: name)
    }

    /// Downloads the schema and its rule scripts (once; again when they changed on the server).
    ///
    /// Fetching and applying do this on first use; call it to have the tables before fetching.
    /// - Throws: ``RemoteError``; the script errors of rules that do not compile here.
    @discardableResult
    nonisolated(nonsending) public func loadSchema() async throws -> SchemaDefinition {
        if let rules { return rules.schema }
        return try await downloadRules().schema
    }

    /// Downloads the schema and builds the local rules over the tables.
    nonisolated(nonsending) func downloadRules() async throws -> LoadedRules {
        let answer = try await call(dataService, "GetSchema", body: Data("{}".utf8))
        noteDeltaForms(of: answer)
        let message: ProtocolMessages.SchemaAnswer
        do {
            message = try JSONDecoder().decode(ProtocolMessages.SchemaAnswer.self, from: answer.body)
        } catch {
            throw RemoteError.invalidResponse("GetSchema", error)
        }
        let allowed = message.allowed.map { Dictionary($0.map { ($0.key.lowercased(), Set($0.value)) }, uniquingKeysWith: { first, _ in first }) }
        let rolesAllowed = Dictionary((message.rolesAllowed ?? [:]).map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        let loaded: LoadedRules
        if let rules {
            try rules.update(to: message.schema, version: message.version)
            loaded = rules
        } else {
            loaded = install(try LoadedRules(schema: message.schema, version: message.version, logger: logger))
        }
        loaded.allowedOperations = allowed
        loaded.rolesAllowed = rolesAllowed
        return loaded
    }

    /// Learns from an answer whether the server reads UpdateData in the binary form.
    func noteDeltaForms(of answer: ProtocolAnswer) {
        serverReadsBinaryDeltas = answer.acceptPost?.contains(DeltaBinary.contentType) == true
    }

    /// Makes downloaded (or saved) rules the adapter's.
    func install(_ loaded: LoadedRules) -> LoadedRules {
        loaded.adapter.session = session ?? Session()
        loaded.adapter.data.beforeRead = { [weak self] table in try self?.fetchOnDemand(table) }
        rules = loaded
        return loaded
    }
}

extension RemoteDataAdapter {
    /// The adapter's table of a name, or an error saying it is not one of the adapter's.
    func ownTable(named name: String) throws -> DataTable {
        guard let table = table(named: name) else { throw Self.notOwned(name) }
        return table
    }

    /// The rules, downloaded on first use, after checking that every table is one of the adapter's.
    nonisolated(nonsending) func rules(owning tables: [DataTable]) async throws -> LoadedRules {
        let rules = try await loadedRules()
        for table in tables where rules.adapter.table(named: table.name) !== table { throw Self.notOwned(table.name) }
        return rules
    }

    private static func notOwned(_ name: String) -> RelataError {
        RelataError(.unknownTable, "the table is not one of the adapter's (fetch it with getDataTable)", table: name)
    }

    /// Tells the delegate, and a request's own delegate when it has one.
    func notify(_ listener: (any RemoteDataAdapterDelegate)?, _ event: (any RemoteDataAdapterDelegate) -> Void) {
        if let delegate { event(delegate) }
        if let listener, listener !== delegate { event(listener) }
    }

    /// Fetches a table the rules' `lda` reads before it was ever fetched, waiting for it (the
    /// rules run synchronously), so a rule reads what the server would read.
    func fetchOnDemand(_ table: DataTable) throws {
        guard let rules, !rules.fetched.contains(table.name.lowercased()) else { return }
        guard let token else {
            throw RemoteError(kind: .authentication, code: RemoteError.sessionNotFoundCode,
                              message: "a rule reads \(table.name), which is not loaded here, and there is no session to fetch it with: log in, or fetch the table first")
        }
        let request = DataRequest(table: table.name)
        let body = try JSONEncoder().encode(ProtocolMessages.GetDataRequest(requests: [request]))
        let answer = try transport.sendBlocking(ProtocolCall(service: dataService, method: "GetData", body: body, token: token,
                                                             accept: RowStream.contentType))
        guard answer.status == 200 else { throw RemoteError(status: answer.status, body: answer.body) }
        var receiver = TableReceiver(requests: [request], rules: rules)
        do {
            try receiver.consume(answer.body, onProgress: { _ in }, onTable: { _ in })
            for (table, conflicts) in try receiver.finish() {
                notify(nil) { $0.remoteDataAdapter(self, didFindConflicts: conflicts, in: table) }
            }
        } catch {
            throw receiver.abandoning(after: error)
        }
    }
}

@available(*, unavailable, message: "A RemoteDataAdapter is used from one isolation, with its tables.")
extension RemoteDataAdapter: Sendable {}

import Hummingbird
import NIOCore
import Relata

/// A request's context with its connection: a streamed answer closes the connection when the
/// client stops reading, and work for a client that has gone is cancelled.
protocol ConnectionContext: RequestContext {
    /// The connection the request came on.
    var channel: any Channel { get }
    /// The request's share of the bytes of bodies the server holds at once (``BodyBudgetMiddleware``).
    var bodyLease: BodyBudget.Lease? { get }
    /// What the request did, for its log line and the metrics (``RequestLogMiddleware``).
    var record: RequestRecord { get }
}

extension ConnectionContext {
    /// A limit on the request's work: `timeLimit`, and cancelled once the client has gone.
    func workLimit(_ timeLimit: Duration?) -> WorkLimit {
        let channel = self.channel
        return WorkLimit(timeLimit: timeLimit, cancelledWhen: { !channel.isActive })
    }

    /// Runs a write of the answer, closing the connection when it has not completed within
    /// `limit` (the client stopped reading): the write then fails and the answer ends.
    func writing(within limit: Duration, _ write: () async throws -> Void) async throws {
        let channel = self.channel
        let logger = self.logger
        let watchdog = channel.eventLoop.scheduleTask(in: limit.timeAmount) {
            logger.notice("the client stopped reading its answer for \(limit); its connection is closed")
            channel.close(promise: nil)
        }
        defer { watchdog.cancel() }
        try await write()
    }
}

/// The context every request starts with: its connection, its share of the server's budget for
/// request bodies (``BodyBudgetMiddleware``), and once ``SessionMiddleware`` found it, its session.
struct RelataRequestContext: ConnectionContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel
    /// The request's share of the bytes of bodies the server holds at once.
    var bodyLease: BodyBudget.Lease?
    /// The session the request's bearer token names, and its domain.
    var authenticated: (session: Session, domain: ServerDomain)?
    let record = RequestRecord()

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }
}

/// The context of a data service's routes: only a request with a session gets one (the routes'
/// group makes it from ``RelataRequestContext`` after ``SessionMiddleware``), so a handler has the
/// session, its domain and the data service the path names, and nothing reads a stranger's body.
struct SessionContext: ChildRequestContext, ConnectionContext {
    var coreContext: CoreRequestContextStorage
    let channel: any Channel
    let bodyLease: BodyBudget.Lease?
    let record: RequestRecord
    let session: Session
    let dataService: DataService

    init(context: RelataRequestContext) throws {
        guard let (session, domain) = context.authenticated else {
            // SessionMiddleware runs before every route of the group: this is a route added outside it.
            throw ProtocolError.noSession
        }
        coreContext = context.coreContext   // the logger, and the path's parameters
        channel = context.channel
        bodyLease = context.bodyLease
        record = context.record
        self.session = session
        dataService = try domain.dataService(named: context.parameters.get("service") ?? "")
        let service = "DataService.\(dataService.storage.schema.name)"
        record.note { $0.service = service }
    }
}

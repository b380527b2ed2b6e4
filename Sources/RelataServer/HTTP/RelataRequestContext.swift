import Hummingbird
import NIOCore
import Relata

/// A request's context with its connection: a streamed answer closes the connection when the
/// client stops reading, and work for a client that has gone is cancelled.
struct RelataRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The connection the request came on.
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

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

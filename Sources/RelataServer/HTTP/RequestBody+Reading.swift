import Foundation
import Hummingbird
import Relata

extension ConnectionContext {
    /// The request's body, at most `limit` bytes (413 beyond), arriving within `timeout` (408
    /// after), its bytes taken from the server's budget for bodies as they arrive (503 when
    /// the bodies held would go past it).
    func body(of request: Request, limit: Int, within timeout: Duration) async throws -> Data {
        let lease = bodyLease
        let reading = Task {
            var body = Data()
            for try await chunk in request.body {
                guard chunk.readableBytes <= limit - body.count else {
                    throw ProtocolError.tooLarge("the request body is larger than \(limit) bytes")
                }
                try lease?.take(chunk.readableBytes)
                body.append(contentsOf: chunk.readableBytesView)
            }
            // A stream cut short by the cancellation below may just end: the body is not whole then.
            try Task.checkCancellation()
            return body
        }
        let deadline = BodyDeadlines.shared.add(after: timeout) { reading.cancel() }
        defer { BodyDeadlines.shared.remove(deadline) }
        do {
            return try await withTaskCancellationHandler { try await reading.value } onCancel: { reading.cancel() }
        } catch is CancellationError where !Task.isCancelled {
            throw ProtocolError.timedOut("the request body did not arrive within \(timeout)")
        } catch is BodyBudget.Exhausted {
            throw ProtocolError.busy("the server holds as many request bodies as it may; try again in a second", retryAfter: 1)
        }
    }

    /// The body as a protocol message: a body that is not one is a bad request naming where.
    func message<Message: Decodable>(_ type: Message.Type, of request: Request, limit: Int, within timeout: Duration) async throws -> Message {
        try await message(of: request, limit: limit, within: timeout) { try JSONDecoder().decode(type, from: $0) }
    }

    /// The body as a protocol message that `read` reads from its bytes (GetData's request has
    /// a reader of its own): a body that is not one is a bad request naming where.
    func message<Message>(of request: Request, limit: Int, within timeout: Duration,
                          reading read: (Data) throws -> Message) async throws -> Message {
        let body = try await body(of: request, limit: limit, within: timeout)
        do {
            return try read(body)
        } catch let error as DecodingError {
            throw ProtocolError.badRequest(ProtocolError.describe(error))
        } catch let failure as JSONScanner.Failure {
            throw ProtocolError.badRequest(failure.description)
        }
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Relata
#if os(Linux)
import AsyncHTTPClient
#endif

/// One call of the protocol: `POST /v2/{service}/{method}` with a JSON body.
struct ProtocolCall: Sendable {
    var service: String
    var method: String
    var body: Data
    var token: String?
    var accept: String?
    var rulesVersion: String?
    /// The `Prefer` header (RFC 7240), for a call whose answer can leave out what the client sent.
    var prefer: String? = nil
    /// The body's media type; JSON when nil.
    var contentType: String? = nil
}

/// The server's whole answer to a call.
struct ProtocolAnswer: Sendable {
    var status: Int
    var body: Data
    /// The answer's `Content-Type`.
    var contentType: String? = nil
    /// The answer's `Accept-Post`: the forms the server reads an UpdateData body in.
    var acceptPost: String? = nil

    init(status: Int, body: Data, contentType: String? = nil, acceptPost: String? = nil) {
        self.status = status
        self.body = body
        self.contentType = contentType
        self.acceptPost = acceptPost
    }

    #if !os(Linux)
    init(_ response: URLResponse?, body: Data) {
        let http = response as? HTTPURLResponse
        self.init(status: http?.statusCode ?? 0, body: body, contentType: http?.value(forHTTPHeaderField: "Content-Type"),
                  acceptPost: http?.value(forHTTPHeaderField: "Accept-Post"))
    }
    #endif
}

/// What a streamed answer delivers, in order: its status once, then its body in chunks.
enum StreamedAnswerPart: Sendable {
    case status(Int)
    case bytes(Data)
}

/// HTTP for the adapter: `URLSession` on Apple platforms (the system's proxy, TLS and cellular
/// settings apply; see `Documentation/Client.md`), AsyncHTTPClient on swift-nio on Linux —
/// swift-corelibs-foundation's URLSession keeps a socket's write source armed while it waits for
/// an answer, which spins a core for as long as the server takes.
final class HTTPTransport: Sendable {
    /// The protocol version the client speaks (the server's `RelataHTTPServer.protocolVersion`).
    static let protocolVersion = 2
    let baseURL: URL
    let timeout: TimeInterval
    #if os(Linux)
    let client: HTTPClient
    #else
    private let session: URLSession
    #endif

    init(baseURL: URL, timeout: TimeInterval) {
        self.baseURL = baseURL
        self.timeout = timeout
        #if os(Linux)
        client = Self.makeClient(timeout: timeout)
        #else
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        session = URLSession(configuration: configuration)
        #endif
    }

    deinit {
        #if os(Linux)
        client.shutdown { _ in }   // no wait: the client lets its requests end, then closes its connections
        #else
        session.finishTasksAndInvalidate()
        #endif
    }

    /// Where a call goes: `{baseURL}/v2/{service}/{method}`.
    func url(for call: ProtocolCall) -> URL {
        baseURL.appendingPathComponent("v\(Self.protocolVersion)").appendingPathComponent(call.service).appendingPathComponent(call.method)
    }

    /// A call's header fields.
    func headerFields(for call: ProtocolCall) -> [(name: String, value: String)] {
        var fields = [("Content-Type", call.contentType ?? "application/json"), ("Accept", call.accept ?? "application/json")]
        if let token = call.token { fields.append(("Authorization", "Bearer \(token)")) }
        if let version = call.rulesVersion { fields.append((RemoteDataAdapter.rulesVersionHeader, version)) }
        if let prefer = call.prefer { fields.append(("Prefer", prefer)) }
        return fields
    }

    #if !os(Linux)
    /// Sends a call and reads its whole answer.
    ///
    /// - Throws: a transient ``RemoteError`` when the server cannot be reached or the
    ///   connection breaks; `CancellationError` when the task is cancelled.
    func send(_ call: ProtocolCall) async throws -> ProtocolAnswer {
        let request = urlRequest(for: call)
        do {
            let (body, response) = try await session.data(for: request)
            return ProtocolAnswer(response, body: body)
        } catch {
            throw Self.transportFailure(error, call: call)
        }
    }

    /// Sends a call and waits for its whole answer, blocking the calling thread: for the one
    /// place that cannot wait asynchronously — a rule's `lda` reading a table not loaded yet.
    /// URLSession works on its own threads meanwhile, so this never waits on itself.
    func sendBlocking(_ call: ProtocolCall) throws -> ProtocolAnswer {
        let completion = BlockingCompletion()
        let task = session.dataTask(with: urlRequest(for: call)) { body, response, error in
            completion.result = error.map { .failure(Self.transportFailure($0, call: call)) }
                ?? .success(ProtocolAnswer(response, body: body ?? Data()))
            completion.done.signal()
        }
        task.resume()
        completion.done.wait()
        guard let result = completion.result else {
            throw RemoteError(kind: .transient, code: RemoteError.networkCode, message: "\(call.service)/\(call.method) ended without an answer")
        }
        return try result.get()
    }

    /// Sends a call and delivers its answer as it arrives. Ending the iteration early
    /// (or cancelling the task) cancels the request.
    ///
    /// The chunks are buffered as URLSession delivers them: a consumer slower than the
    /// network holds the rest of the answer in memory until it reads it.
    func stream(_ call: ProtocolCall) -> AsyncThrowingStream<StreamedAnswerPart, any Error> {
        let (stream, continuation) = AsyncThrowingStream<StreamedAnswerPart, any Error>.makeStream()
        let receiver = StreamReceiver(continuation: continuation, call: call)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        let session = URLSession(configuration: configuration, delegate: receiver, delegateQueue: nil)
        let task = session.dataTask(with: urlRequest(for: call))
        continuation.onTermination = { _ in
            task.cancel()
            session.finishTasksAndInvalidate()
        }
        task.resume()
        return stream
    }

    func urlRequest(for call: ProtocolCall) -> URLRequest {
        var request = URLRequest(url: url(for: call), timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.httpBody = call.body
        for field in headerFields(for: call) { request.setValue(field.value, forHTTPHeaderField: field.name) }
        return request
    }
    #endif

    /// A failure below the protocol: the server unreachable, the connection broken, a timeout.
    static func transportFailure(_ error: any Error, call: ProtocolCall) -> any Error {
        if error is CancellationError { return error }
        if let error = error as? URLError, error.code == .cancelled { return CancellationError() }
        if error is RemoteError { return error }
        #if os(Linux)
        if let error = error as? HTTPClientError, error == .cancelled { return CancellationError() }
        let description = String(describing: error)
        #else
        let description = error.localizedDescription
        #endif
        return RemoteError(kind: .transient, code: RemoteError.networkCode,
                           message: "\(call.service)/\(call.method) did not complete: \(description)")
    }
}

#if !os(Linux)
/// The answer of a blocking call, from URLSession's thread to the waiting one.
private final class BlockingCompletion: @unchecked Sendable {
    // @unchecked Sendable: `result` is written once, before `done` is signalled, and read only
    // after waiting on `done`; the semaphore orders the two accesses.
    var result: Result<ProtocolAnswer, any Error>?
    let done = DispatchSemaphore(value: 0)
}

/// Hands a task's answer to an `AsyncThrowingStream` as URLSession delivers it.
private final class StreamReceiver: NSObject, URLSessionDataDelegate, Sendable {
    let continuation: AsyncThrowingStream<StreamedAnswerPart, any Error>.Continuation
    let call: ProtocolCall

    init(continuation: AsyncThrowingStream<StreamedAnswerPart, any Error>.Continuation, call: ProtocolCall) {
        self.continuation = continuation
        self.call = call
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        continuation.yield(.status((response as? HTTPURLResponse)?.statusCode ?? 0))
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        continuation.yield(.bytes(data))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error {
            continuation.finish(throwing: HTTPTransport.transportFailure(error, call: call))
        } else {
            continuation.finish()
        }
    }
}
#endif

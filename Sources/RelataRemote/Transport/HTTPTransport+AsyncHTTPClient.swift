#if os(Linux)
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// The transport on Linux: AsyncHTTPClient, whose event loops sleep in `epoll` while an answer
/// is awaited. The timeout applies as URLSession's `timeoutIntervalForRequest` does: to
/// connecting, and to each wait for more of the answer — a long answer that keeps coming is never cut.
extension HTTPTransport {
    static func makeClient(timeout: TimeInterval) -> HTTPClient {
        // Checked before it becomes nanoseconds: a NaN, negative or huge timeout would trap there.
        let seconds = timeout.isFinite ? min(max(timeout, 0.001), 1_000_000_000) : 1_000_000_000
        let idle = TimeAmount.nanoseconds(Int64(seconds * 1_000_000_000))
        let configuration = HTTPClient.Configuration(timeout: HTTPClient.Configuration.Timeout(connect: idle, read: idle))
        return HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
    }

    /// Sends a call and reads its whole answer.
    ///
    /// - Throws: a transient ``RemoteError`` when the server cannot be reached or the
    ///   connection breaks; `CancellationError` when the task is cancelled.
    func send(_ call: ProtocolCall) async throws -> ProtocolAnswer {
        do {
            let response = try await client.execute(request(for: call), deadline: .distantFuture)
            let body = try await response.body.collect(upTo: .max)
            return ProtocolAnswer(status: Int(response.status.code), body: Data(body.readableBytesView), headers: response.headers)
        } catch {
            throw Self.transportFailure(error, call: call)
        }
    }

    /// Sends a call and waits for its whole answer, blocking the calling thread: for the one
    /// place that cannot wait asynchronously — a rule's `lda` reading a table not loaded yet.
    /// The request runs on the client's event loops, never on the waiting thread or Swift's
    /// cooperative pool, so this never waits on itself.
    func sendBlocking(_ call: ProtocolCall) throws -> ProtocolAnswer {
        do {
            let request = try HTTPClient.Request(url: url(for: call).absoluteString, method: .POST, headers: headers(for: call),
                                                 body: .byteBuffer(ByteBuffer(bytes: call.body)))
            let response = try client.execute(request: request).wait()
            let body = response.body.map { Data($0.readableBytesView) } ?? Data()
            return ProtocolAnswer(status: Int(response.status.code), body: body, headers: response.headers)
        } catch {
            throw Self.transportFailure(error, call: call)
        }
    }

    /// Sends a call and delivers its answer as it arrives. Ending the iteration early
    /// (or cancelling the task) cancels the request.
    ///
    /// The chunks are buffered as they arrive: a consumer slower than the network holds the
    /// rest of the answer in memory until it reads it.
    func stream(_ call: ProtocolCall) -> AsyncThrowingStream<StreamedAnswerPart, any Error> {
        let (stream, continuation) = AsyncThrowingStream<StreamedAnswerPart, any Error>.makeStream()
        let client = self.client, request = request(for: call)
        let task = Task {
            do {
                let response = try await client.execute(request, deadline: .distantFuture)
                continuation.yield(.status(Int(response.status.code)))
                for try await chunk in response.body {
                    continuation.yield(.bytes(Data(chunk.readableBytesView)))
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: Self.transportFailure(error, call: call))
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    private func request(for call: ProtocolCall) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: url(for: call).absoluteString)
        request.method = .POST
        request.headers = headers(for: call)
        request.body = .bytes(ByteBuffer(bytes: call.body))
        return request
    }

    private func headers(for call: ProtocolCall) -> HTTPHeaders {
        HTTPHeaders(headerFields(for: call).map { ($0.name, $0.value) })
    }
}

extension ProtocolAnswer {
    init(status: Int, body: Data, headers: HTTPHeaders) {
        self.init(status: status, body: body, contentType: headers.first(name: "Content-Type"), acceptPost: headers.first(name: "Accept-Post"))
    }
}
#endif

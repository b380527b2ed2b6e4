import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Relata

/// A bare TCP connection to a server under test, for clients no HTTP library would be: one
/// that stops reading, sends half a request, or trickles it. Every wait has a deadline.
final class RawConnection: @unchecked Sendable {
    // @unchecked Sendable: the descriptor is a constant; reads run one at a time on their own thread.
    private let descriptor: Int32

    /// Connects with a small receive buffer, so a client that stops reading stalls the server soon.
    init(port: Int, receiveBuffer: Int32 = 4096) throws {
        #if os(Linux)
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var size = receiveBuffer
        setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard descriptor >= 0, connected == 0 else { throw RelataError(.fileFailed, "cannot connect to port \(port)") }
    }

    /// Sends a request's head and body (or part of one).
    func send(_ head: String, body: Data = Data()) throws {
        let bytes = Array(head.utf8) + Array(body)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { throw RelataError(.fileFailed, "the connection closed") }
            sent += count
        }
    }

    /// The next bytes that arrive within `limit`; empty when the server closed the connection.
    /// The blocking read runs on a thread of its own: blocking a thread of Swift's cooperative
    /// pool (one per core) could starve the server under test.
    ///
    /// - Throws: when nothing arrived within `limit`.
    func receiveSome(within limit: Duration) async throws -> [UInt8] {
        let descriptor = self.descriptor
        let (seconds, attoseconds) = limit.components
        var timeout = timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let received: [UInt8]? = await withCheckedContinuation { continuation in
            Thread {
                var buffer = [UInt8](repeating: 0, count: 64 << 10)
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                continuation.resume(returning: count >= 0 ? Array(buffer[0..<count]) : nil)
            }.start()
        }
        guard let received else { throw RelataError(.fileFailed, "nothing arrived within \(limit)") }
        return received
    }

    /// Reads and drops what arrives until the server closes the connection; false when it is
    /// still open after `limit`.
    func closedByTheServer(within limit: Duration) async -> Bool {
        await bytesUntilClosed(within: limit) != nil
    }

    /// Reads what arrives until the server closes the connection: how many bytes came, or nil
    /// when it is still open after `limit`.
    func bytesUntilClosed(within limit: Duration) async -> Int? {
        let deadline = ContinuousClock.now + limit
        var total = 0
        while ContinuousClock.now < deadline {
            guard let bytes = try? await receiveSome(within: min(.seconds(1), deadline - ContinuousClock.now)) else { continue }
            if bytes.isEmpty { return total }
            total += bytes.count
        }
        return nil
    }

    func close() {
        #if os(Linux)
        _ = Glibc.close(descriptor)
        #else
        _ = Darwin.close(descriptor)
        #endif
    }
}

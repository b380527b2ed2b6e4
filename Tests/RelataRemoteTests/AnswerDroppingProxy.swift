import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Relata

/// A loopback HTTP proxy in front of a server under test that loses answers: it forwards each
/// request (one per connection), reads the server's whole answer — the server has done the work
/// by then — and for the first `dropping` UpdateData requests closes the client's connection
/// instead of passing the answer on. Every socket wait has a deadline; ``stop()`` ends it.
final class AnswerDroppingProxy: @unchecked Sendable {
    // @unchecked Sendable: the descriptors are constants; the counters are read and written under `lock`.
    let port: Int
    private let upstreamPort: Int
    private let listener: Int32
    private let lock = NSLock()
    private var toDrop: Int
    private var updates = 0

    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }
    /// UpdateData requests that reached the server.
    var updateDataRequests: Int { lock.withLock { updates } }
    /// The `Content-Type` of each UpdateData request, in order.
    var updateDataContentTypes: [String] { lock.withLock { contentTypes } }
    private var contentTypes: [String] = []
    /// The bodies of the UpdateData requests, in the order they came.
    var updateDataBodies: [[UInt8]] { lock.withLock { bodies } }
    private var bodies: [[UInt8]] = []
    /// Leaves `Accept-Post` out of every answer, as a server from before the binary delta form answers.
    var hidesAcceptPost: Bool {
        get { lock.withLock { hiding } }
        set { lock.withLock { hiding = newValue } }
    }
    private var hiding = false
    /// Drops the answers of the next `count` UpdateData requests.
    func drop(next count: Int) { lock.withLock { toDrop = count } }

    init(upstreamPort: Int, dropping: Int) throws {
        self.upstreamPort = upstreamPort
        toDrop = dropping
        let listener = Self.tcpSocket()
        self.listener = listener
        var reuse: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard listener >= 0, bound == 0, listen(listener, 64) == 0 else { throw RelataError(.fileFailed, "the proxy cannot listen") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Stops accepting; connections being served end within their deadlines.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            Thread { [self] in serve(client) }.start()
        }
    }

    private func serve(_ client: Int32) {
        defer { close(client) }
        Self.setDeadline(client)
        guard let request = Self.readRequest(client) else { return }
        let isUpdate = request.head.hasPrefix("POST ") && request.head.split(separator: "\r\n").first?.contains("/UpdateData ") == true
        let upstream = Self.tcpSocket()
        defer { close(upstream) }
        var address = Self.loopback(port: upstreamPort)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return }
        Self.setDeadline(upstream)
        // One request per connection: the client never reuses a connection whose answer was lost.
        let head = request.head.split(separator: "\r\n", omittingEmptySubsequences: false)
            .filter { !$0.lowercased().hasPrefix("connection:") }.joined(separator: "\r\n")
        let headWithClose = head.replacingOccurrences(of: "\r\n\r\n", with: "\r\nConnection: close\r\n\r\n")
        guard Self.write(Array(headWithClose.utf8) + request.body, to: upstream) else { return }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(upstream, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            answer += buffer[0..<count]
        }
        let contentType = request.head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-type:") }
            .map { $0.dropFirst("content-type:".count).trimmingCharacters(in: .whitespaces) } ?? ""
        let (drop, hideAcceptPost) = lock.withLock {
            guard isUpdate else { return (false, hiding) }
            updates += 1
            contentTypes.append(contentType)
            bodies.append(request.body)
            guard toDrop > 0 else { return (false, hiding) }
            toDrop -= 1
            return (true, hiding)
        }
        // The answer says the connection closes after it (it does): a client that kept it for its
        // next request would race the close.
        if let headEnd = answer.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound {
            let head = String(decoding: answer[..<headEnd], as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
                .filter { !$0.lowercased().hasPrefix("connection:") && !(hideAcceptPost && $0.lowercased().hasPrefix("accept-post:")) }
                .joined(separator: "\r\n")
            answer = Array(head.replacingOccurrences(of: "\r\n\r\n", with: "\r\nConnection: close\r\n\r\n").utf8) + answer[headEnd...]
        }
        if !drop { _ = Self.write(answer, to: client) }
    }

    /// A request's head (through the blank line) and its body (`Content-Length` bytes).
    private static func readRequest(_ socket: Int32) -> (head: String, body: [UInt8])? {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        let separator = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        var needed = Int.max
        while bytes.count < needed {
            let count = buffer.withUnsafeMutableBytes { read(socket, $0.baseAddress, $0.count) }
            guard count > 0 else { return nil }
            bytes += buffer[0..<count]
            if headEnd == nil, let range = bytes.firstRange(of: separator) {
                headEnd = range.upperBound
                let head = String(decoding: bytes[..<range.upperBound], as: UTF8.self)
                let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                needed = range.upperBound + length
            }
        }
        guard let headEnd else { return nil }
        return (String(decoding: bytes[..<headEnd], as: UTF8.self), Array(bytes[headEnd...]))
    }

    private static func write(_ bytes: [UInt8], to socket: Int32) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.write(socket, $0.baseAddress, $0.count) }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    private static func tcpSocket() -> Int32 {
        socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    /// Reads and writes on the socket give up after 30 s: nothing here waits for ever.
    private static func setDeadline(_ socket: Int32) {
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }
}

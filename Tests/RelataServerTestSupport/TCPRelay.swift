import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP relay from a loopback port of its own to another loopback port. Bytes flow both ways
/// until ``blackHole()``: from then on the connections open at that moment stay open and carry
/// nothing, as a network that stops delivering packets — while connections made later flow
/// again. For tests of an answer that never comes, without stopping the server at the far end
/// (a stopped PostgreSQL backend holds up every `DROP DATABASE` of the cluster).
///
/// ```swift
/// let relay = try TCPRelay(to: 5432)
/// defer { relay.close() }
/// // connect to 127.0.0.1:\(relay.port) … then:
/// relay.blackHole()
/// ```
public final class TCPRelay: @unchecked Sendable {
    // @unchecked Sendable: `pairs`, `closed` are read and written only under `lock`; the rest are constants.
    public let port: Int
    private let target: Int
    private let listener: Int32
    private let lock = NSLock()
    private var pairs: [Pair] = []
    private var closed = false

    /// One client's connection and the relay's connection to the target for it.
    private final class Pair: @unchecked Sendable {
        // @unchecked Sendable: `swallowing` is read and written only under `lock`; the sockets are constants.
        let client: Int32, server: Int32
        private let lock = NSLock()
        private var swallowing = false

        init(client: Int32, server: Int32) {
            self.client = client
            self.server = server
        }

        var isSwallowing: Bool {
            get { lock.withLock { swallowing } }
            set { lock.withLock { swallowing = newValue } }
        }

        func shutDown() {
            Glibc.shutdown(client, Int32(SHUT_RDWR))
            Glibc.shutdown(server, Int32(SHUT_RDWR))
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Listens on a free loopback port for connections to relay to `targetPort` on 127.0.0.1.
    public init(to targetPort: Int) throws {
        target = targetPort
        (listener, port) = try Self.listen()
        let accepting = Thread { [self] in acceptConnections() }
        accepting.name = "relata.test-relay"
        accepting.start()
    }

    /// A socket listening on a free loopback port, and that port.
    private static func listen() throws -> (Int32, Int) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && Glibc.listen(listener, 16) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard listening else {
            Glibc.close(listener)
            throw Failure(description: "bind/listen: errno \(errno)")
        }
        return (listener, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// The connections open now deliver nothing more, either way; they stay open.
    public func blackHole() {
        lock.withLock { pairs.forEach { $0.isSwallowing = true } }
    }

    /// Stops listening and closes every connection.
    public func close() {
        let open: [Pair] = lock.withLock {
            guard !closed else { return [] }
            closed = true
            Glibc.shutdown(listener, Int32(SHUT_RDWR))
            defer { pairs = [] }
            return pairs
        }
        open.forEach { $0.shutDown() }
    }

    deinit {
        close()
        Glibc.close(listener)
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func acceptConnections() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }   // shut down by close()
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: target)
            let connected = server >= 0 && withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            } == 0
            let pair = Pair(client: client, server: server)
            let kept = connected && lock.withLock {
                guard !closed else { return false }
                pairs.append(pair)
                return true
            }
            guard kept else {
                Glibc.close(client)
                if server >= 0 { Glibc.close(server) }
                continue
            }
            let ended = DispatchGroup()
            for (from, to) in [(client, server), (server, client)] {
                ended.enter()
                let pump = Thread { [self] in
                    relay(pair, from: from, to: to)
                    ended.leave()
                }
                pump.name = "relata.test-relay-pump"
                pump.start()
            }
            ended.notify(queue: .global()) { [self] in
                lock.withLock { pairs.removeAll { $0 === pair } }
                Glibc.close(pair.client)
                Glibc.close(pair.server)
            }
        }
    }

    /// Copies bytes from one socket to the other until either end closes; the other end is then shut too.
    private func relay(_ pair: Pair, from: Int32, to: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(from, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            if pair.isSwallowing { continue }
            var sent = 0
            while sent < count {
                let wrote = buffer.withUnsafeBytes { bytes in
                    bytes.baseAddress.map { send(to, $0 + sent, count - sent, Int32(MSG_NOSIGNAL)) } ?? -1
                }
                guard wrote > 0 else { return pair.shutDown() }
                sent += wrote
            }
        }
        pair.shutDown()
    }
}

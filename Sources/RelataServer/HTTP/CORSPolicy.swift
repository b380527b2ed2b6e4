import Foundation
import Relata

/// Which web pages of other origins may call the server from a browser (cross-origin resource
/// sharing). The server's own pages — the console at `/` — need none of it.
///
/// ```swift
/// let cors = try CORSPolicy(allowOrigins: ["https://shop.example.com", "http://localhost:5173"])
/// let configuration = ServerConfiguration(port: 7099, cors: cors)
/// ```
///
/// Requests carry the session as a bearer token, never a cookie, so a page of another origin
/// can do nothing with a user's session that the page itself was not given: the policy only
/// decides which pages' scripts may read the answers.
public struct CORSPolicy: Sendable, Hashable {
    /// The origins allowed, lower-cased (`https://shop.example.com`); `*` allows every origin.
    public let allowOrigins: [String]

    /// The policy that allows no other origin (the default).
    public static let none = CORSPolicy(checked: [])

    /// The request headers a page may send, and the answer headers it may read.
    static let allowedHeaders = "authorization, content-type, accept, x-relata-rules-version, prefer"
    static let exposedHeaders = "x-request-id, retry-after, preference-applied, accept-post"
    static let allowedMethods = "GET, POST"
    /// How long a browser may keep a preflight's answer.
    static let maxAgeSeconds = 600

    /// Checks each origin: `*`, or `scheme://host` with an optional port — no path, query,
    /// user or trailing slash (a browser's `Origin` header has none).
    ///
    /// - Throws: ``RelataError`` (`invalidArgument`) naming the origin and what is wrong with it.
    public init(allowOrigins: [String]) throws {
        self.init(checked: try allowOrigins.map(Self.checked))
    }

    private init(checked: [String]) {
        allowOrigins = checked
    }

    /// Whether a page of `origin` (a request's `Origin` header) may read the answers.
    public func allows(origin: String) -> Bool {
        allowOrigins.contains { $0 == "*" || $0.equalsIgnoringCase(origin) }
    }

    private static func checked(_ origin: String) throws -> String {
        func invalid(_ why: String) -> RelataError {
            RelataError(.invalidArgument, "cors.allowOrigins: '\(origin)' is not an origin: \(why) (write it as a browser sends it: 'https://shop.example.com' or 'http://localhost:8080', or '*' for every origin)")
        }
        if origin == "*" { return origin }
        guard origin.utf8.count <= 2048 else { throw invalid("it is longer than 2048 bytes") }
        guard let schemeEnd = origin.range(of: "://") else { throw invalid("it has no scheme") }
        let scheme = origin[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { throw invalid("its scheme is '\(scheme)', not http or https") }
        let authority = origin[schemeEnd.upperBound...]
        guard !authority.isEmpty else { throw invalid("it has no host") }
        if authority.hasSuffix("/") { throw invalid("it ends with '/'") }
        if let bad = authority.first(where: { "/?#@ \t".contains($0) }) { throw invalid("it holds '\(bad)' after the host") }
        var host = Substring(authority)
        if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
            let port = authority[authority.index(after: colon)...]
            guard let number = Int(port), (1...65535).contains(number) else { throw invalid("its port '\(port)' is not 1 to 65535") }
            host = authority[..<colon]
        }
        guard !host.isEmpty else { throw invalid("it has no host") }
        return origin.lowercased()
    }
}

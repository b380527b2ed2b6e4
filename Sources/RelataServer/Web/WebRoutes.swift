import Foundation
import Hummingbird
import NIOCore
import Relata

/// The pages a browser gets from the server itself, built into the binary: the web console at
/// `/` (`index.html`, `console.js`, `console.css`) and the JavaScript client at `/client/*.js`
/// (`Clients/JavaScript`, `Documentation/JavaScript.md`), the module a page imports as
/// `/client/relata.js`.
///
/// Each answer carries an `ETag` (a digest of its bytes) and `Cache-Control: no-cache`, so a
/// browser asks again each time and gets `304 Not Modified` until the server is upgraded; the
/// console's page carries a content security policy that lets it load only the server's own
/// files and call only the server (`'unsafe-eval'` is there because the rules are compiled in
/// the page, as JavaScriptCore compiles them on the server).
struct WebRoutes {
    /// One file: its bytes, type and digest.
    struct File: Sendable {
        let bytes: [UInt8]
        let contentType: String
        let etag: String

        init(_ bytes: [UInt8], _ contentType: String) {
            self.bytes = bytes
            self.contentType = contentType
            etag = "\"" + SHA256.hex(of: bytes).prefix(24) + "\""
        }
    }

    static let javaScript = "text/javascript; charset=utf-8"

    /// Every file served, by path.
    static let files: [String: File] = [
        "/": File(PackageResources.index_html, "text/html; charset=utf-8"),
        "/console.js": File(PackageResources.console_js, javaScript),
        "/console.css": File(PackageResources.console_css, "text/css; charset=utf-8"),
        "/client/relata.js": File(PackageResources.relata_js, javaScript),
        "/client/client.js": File(PackageResources.client_js, javaScript),
        "/client/table.js": File(PackageResources.table_js, javaScript),
        "/client/values.js": File(PackageResources.values_js, javaScript),
        "/client/rules.js": File(PackageResources.rules_js, javaScript),
        "/client/rowstream.js": File(PackageResources.rowstream_js, javaScript),
        "/client/errors.js": File(PackageResources.errors_js, javaScript),
        "/client/expressions.js": File(PackageResources.expressions_js, javaScript),
        "/client/validation.js": File(PackageResources.validation_js, javaScript),
        "/client/rule-environment.js": File(PackageResources.rule_environment_js, javaScript),
        "/client/edits.js": File(PackageResources.edits_js, javaScript),
        "/client/relata.d.ts": File(PackageResources.relata_d_ts, "application/typescript; charset=utf-8"),
    ]

    /// What the console's page may load and call: only this server.
    static let contentSecurityPolicy = "default-src 'none'; script-src 'self' 'unsafe-eval'; style-src 'self'; img-src 'self' data:; "
        + "connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

    func add(to router: Router<RelataRequestContext>) {
        for (path, file) in Self.files {
            let route = path == "/" ? "" : String(path.dropFirst())
            router.get(RouterPath(route)) { request, _ in Self.answer(file, isPage: path == "/", request: request) }
            router.head(RouterPath(route)) { request, _ in Self.answer(file, isPage: path == "/", request: request, bodyless: true) }
        }
        router.get("index.html") { _, _ in Response(status: .movedPermanently, headers: [.location: "/"]) }
    }

    static func answer(_ file: File, isPage: Bool, request: Request, bodyless: Bool = false) -> Response {
        let matches = request.headers[.ifNoneMatch].map { tags in
            tags.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == file.etag }
        } ?? false
        var response = matches ? Response(status: .notModified)
            : Response(status: .ok, body: bodyless ? ResponseBody() : ResponseBody(byteBuffer: ByteBuffer(bytes: file.bytes)))
        response.headers[.contentType] = file.contentType
        response.headers[.eTag] = file.etag
        response.headers[.cacheControl] = "no-cache"
        response.headers[.init("x-content-type-options")!] = "nosniff"
        response.headers[.init("referrer-policy")!] = "no-referrer"
        if isPage {
            response.headers[.init("content-security-policy")!] = contentSecurityPolicy
            response.headers[.init("x-frame-options")!] = "DENY"
        }
        if !matches { response.headers[.contentLength] = String(file.bytes.count) }
        return response
    }
}

import Foundation
import Relata
@testable import RelataServer
import RelataTestSupport
import Testing

/// What a browser gets: the console and the JavaScript client from the server itself, and
/// cross-origin access for the origins a server names (and no other).
@Suite(.timeLimit(.minutes(5))) struct BrowserAccessTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func anOriginIsWrittenAsABrowserSendsIt() throws {
        let policy = try CORSPolicy(allowOrigins: ["https://Shop.Example.com", "http://localhost:5173", "http://[::1]:8080", "*"])
        #expect(policy.allowOrigins == ["https://shop.example.com", "http://localhost:5173", "http://[::1]:8080", "*"])
        let narrow = try CORSPolicy(allowOrigins: ["https://shop.example.com"])
        #expect(narrow.allows(origin: "https://shop.example.com"))
        #expect(narrow.allows(origin: "HTTPS://SHOP.EXAMPLE.COM"))
        #expect(!narrow.allows(origin: "https://shop.example.com.evil.net"))
        #expect(!narrow.allows(origin: "http://shop.example.com"), "another scheme is another origin")
        #expect(!narrow.allows(origin: "https://shop.example.com:8443"), "another port is another origin")
        #expect(!narrow.allows(origin: "null"))
        #expect(!CORSPolicy.none.allows(origin: "http://localhost"))
        let refusals: [(String, String)] = [
            ("shop.example.com", "it has no scheme"), ("ftp://shop.example.com", "its scheme is 'ftp'"),
            ("https://shop.example.com/", "it ends with '/'"), ("https://shop.example.com/app", "it holds '/' after the host"),
            ("https://user@shop.example.com", "it holds '@'"), ("https://shop.example.com:0", "its port '0' is not 1 to 65535"),
            ("https://shop.example.com:99999", "its port '99999'"), ("https://", "it has no host"), ("https://:80", "it has no host"),
            (String(repeating: "a", count: 3000), "longer than 2048 bytes"),
        ]
        for (origin, why) in refusals {
            #expect {
                _ = try CORSPolicy(allowOrigins: [origin])
            } throws: { error in
                let error = error as? RelataError
                return error?.code == .invalidArgument && error?.message.contains(why) == true && error?.message.contains("cors.allowOrigins") == true
            }
        }
    }

    @Test func aPreflightFromANamedOriginIsAnsweredAndItsAnswersAreReadable() async throws {
        let server = try HTTPProtocolTests.Server()
        let configuration = ServerConfiguration(port: 0, cors: try CORSPolicy(allowOrigins: ["http://localhost:5173"]))
        try await server.test(configuration) { client in
            let preflight = try await client.request("/v2/DataService/GetData", method: "OPTIONS", headers: [
                "Origin": "http://localhost:5173", "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization, content-type, x-relata-rules-version, prefer",
            ])
            #expect(preflight.status == 204)
            #expect(preflight.header("access-control-allow-origin") == "http://localhost:5173")
            #expect(preflight.header("access-control-allow-methods") == "GET, POST")
            let allowedHeaders = preflight.header("access-control-allow-headers") ?? ""
            for header in ["authorization", "content-type", "x-relata-rules-version", "prefer"] { #expect(allowedHeaders.contains(header)) }
            #expect(preflight.header("access-control-max-age") == "600")
            #expect(preflight.header("vary") == "Origin")

            // The answer itself, a refusal too, is readable by the page, with its request id and Retry-After.
            let login = try await client.request("/v2/LoginService/Login", body: Data(#"{"loginString": "User=ann;Password=wrong"}"#.utf8),
                                                 headers: ["Origin": "http://localhost:5173"])
            #expect(login.status == 401)
            #expect(login.header("access-control-allow-origin") == "http://localhost:5173")
            #expect(login.header("access-control-expose-headers")?.contains("x-request-id") == true)

            let elsewhere = try await client.request("/v2/LoginService/Login", body: Data(#"{"loginString": "User=ann;Password=wrong"}"#.utf8),
                                                     headers: ["Origin": "https://evil.example"])
            #expect(elsewhere.status == 401, "the request is answered as without CORS")
            #expect(elsewhere.header("access-control-allow-origin") == nil, "and the browser keeps the answer from the page")
            #expect(elsewhere.header("vary") == "Origin")

            // A page may ask for the minimal UpdateData answer, and can read that it got it.
            let token = try #require(try await HTTPProtocolTests.login(client))
            let apply = try await client.request("/v2/DataService/UpdateData", body: Data(#"{"deltas":[]}"#.utf8), token: token,
                                                 headers: ["Origin": "http://localhost:5173", "Prefer": "return=minimal"])
            #expect(apply.status == 200)
            #expect(apply.header("preference-applied") == "return=minimal")
            #expect(apply.header("access-control-expose-headers")?.contains("preference-applied") == true)
            #expect(apply.header("vary") == "Prefer, Accept, Origin", "the answer varies by each")
            #expect(apply.header("access-control-expose-headers")?.contains("accept-post") == true, "a page can learn the forms the server reads")
        }
    }

    @Test func aPreflightFromAnotherOriginOrForAnotherMethodIsRefusedInTheProtocolsWords() async throws {
        let server = try HTTPProtocolTests.Server()
        for configuration in [ServerConfiguration(port: 0), ServerConfiguration(port: 0, cors: try CORSPolicy(allowOrigins: ["https://shop.example.com"]))] {
            try await server.test(configuration) { client in
                let refused = try await client.request("/v2/LoginService/Login", method: "OPTIONS",
                                                       headers: ["Origin": "https://evil.example", "Access-Control-Request-Method": "POST"])
                #expect(refused.status == 403)
                #expect(refused.header("access-control-allow-origin") == nil)
                let error = try HTTPProtocolTests.error(refused.body)
                #expect(error.code == "permissionDenied")
                #expect(error.message.contains("pages of https://evil.example may not call this server"), "\(error.message)")
                #expect(error.message.contains("cors.allowOrigins"))
                #expect(refused.header("x-request-id") != nil)
            }
        }
        try await server.test(ServerConfiguration(port: 0, cors: try CORSPolicy(allowOrigins: ["*"]))) { client in
            let any = try await client.request("/v2/LoginService/Login", method: "OPTIONS",
                                               headers: ["Origin": "https://anywhere.example", "Access-Control-Request-Method": "POST"])
            #expect(any.status == 204)
            #expect(any.header("access-control-allow-origin") == "https://anywhere.example")
            let put = try await client.request("/v2/LoginService/Login", method: "OPTIONS",
                                               headers: ["Origin": "https://anywhere.example", "Access-Control-Request-Method": "PUT"])
            #expect(put.status == 403)
            #expect(try HTTPProtocolTests.error(put.body).message.contains("GET and POST, not PUT"))
        }
    }

    /// Every module of `Clients/JavaScript` is served, byte for byte as in the checkout: the
    /// console's page, script and style too, each with its type, an ETag that answers 304, and HEAD.
    @Test func theConsoleAndEveryModuleOfTheClientAreServedAsTheyAreInTheCheckout() async throws {
        let clientFolder = Self.packageRoot.appendingPathComponent("Clients/JavaScript")
        let modules = try FileManager.default.contentsOfDirectory(atPath: clientFolder.path)
            .filter { $0.hasSuffix(".js") || $0.hasSuffix(".d.ts") }.sorted()
        #expect(modules.count >= 8)
        let server = try HTTPProtocolTests.Server()
        try await server.test { client in
            for module in modules {
                let answer = try await client.request("/client/\(module)", method: "GET")
                #expect(answer.status == 200, "/client/\(module) is served")
                #expect(answer.body == (try Data(contentsOf: clientFolder.appendingPathComponent(module))), "/client/\(module) is the checkout's")
                #expect(answer.header("content-type")?.hasPrefix(module.hasSuffix(".js") ? "text/javascript" : "application/typescript") == true)
                #expect(answer.header("x-content-type-options") == "nosniff")
            }
            let page = try await client.request("/", method: "GET")
            #expect(page.status == 200)
            #expect(page.header("content-type") == "text/html; charset=utf-8")
            #expect(page.header("content-security-policy")?.contains("connect-src 'self'") == true)
            #expect(page.header("x-frame-options") == "DENY")
            #expect(String(decoding: page.body, as: UTF8.self).contains(#"<script type="module" src="/console.js"></script>"#))
            let consoleFolder = Self.packageRoot.appendingPathComponent("Sources/RelataServer/Web/Files")
            for (path, file) in [("/console.js", "console.js"), ("/console.css", "console.css")] {
                let answer = try await client.request(path, method: "GET")
                #expect(answer.body == (try Data(contentsOf: consoleFolder.appendingPathComponent(file))))
            }
            let etag = try #require(page.header("etag"))
            let unchanged = try await client.request("/", method: "GET", headers: ["If-None-Match": etag])
            #expect(unchanged.status == 304)
            #expect(unchanged.body.isEmpty)
            let other = try await client.request("/", method: "GET", headers: ["If-None-Match": #""0000""#])
            #expect(other.status == 200)
            let head = try await client.request("/client/relata.js", method: "HEAD")
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            let missing = try await client.request("/client/nope.js", method: "GET")
            #expect(missing.status == 404)
            #expect(try HTTPProtocolTests.error(missing.body).code == "notFound")
        }
    }
}

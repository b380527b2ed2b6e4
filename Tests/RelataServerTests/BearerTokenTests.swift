import Hummingbird
import Testing
@testable import RelataServer

/// The token of an `Authorization` header, as the session middleware and logout read it.
@Suite struct BearerTokenTests {
    func token(_ header: String?) -> String? {
        var fields = HTTPFields()
        if let header { fields[.authorization] = header }
        let head = HTTPRequest(method: .post, scheme: "http", authority: "127.0.0.1", path: "/v2/DataService/GetData", headerFields: fields)
        return SessionMiddleware.bearerToken(Request(head: head, body: RequestBody(buffer: ByteBuffer())))
    }

    @Test func spacesAndTabsAroundTheTokenAreHTTPsAndAreDropped() {
        #expect(token("Bearer abc123") == "abc123")
        #expect(token("Bearer  \t abc123 \t ") == "abc123")
        #expect(token("Bearer a b") == "a b")   // inside the token they are the token's: no session has it
        #expect(token("Bearer ") == nil)   // HTTP's fields drop a value's trailing blanks: "Bearer" names no token
        #expect(token("Bearer \t ") == nil)
    }

    @Test func anotherSchemeOrNoHeaderIsNoToken() {
        #expect(token(nil) == nil)
        #expect(token("Basic YWxhZGRpbjpvcGVuc2VzYW1l") == nil)
        #expect(token("bearer abc") == nil)
        #expect(token("Bearerabc") == nil)
    }

    @Test func nonASCIITextIsKeptWhole() {
        #expect(token("Bearer jeton-é") == "jeton-é")
    }
}

import Foundation
import Hummingbird
import Relata
@testable import RelataServer
import RelataServerTestSupport
import Testing

/// `Prefer: return=minimal` (RFC 7240) on UpdateData: the answer leaves out the values the client
/// sent and says so; everything the server made of each change is still there.
@Suite(.timeLimit(.minutes(5))) struct MinimalAnswerTests {
    /// The same delta, sent to two fresh servers — one asking for the minimal answer, one not — with
    /// a change the server refuses and one it stores.
    @Test func aMinimalAnswerIsTheFullAnswerWithoutTheValuesSent() async throws {
        func send(prefer: String?) async throws -> (deltas: [Delta], applied: String?, vary: String?) {
            let details = try DataServiceTests.clientTables().details
            try details.rows[0].setValue(-5, forKey: "Quantity")
            try details.rows[2].setValue(8, forKey: "Quantity")
            let body = try DeltaJSON.encode([details.makeDelta()])
            let answer = try await Self.answer(to: body, prefer: prefer)
            #expect(answer.status == 200)
            return (try DeltaJSON.decode(answer.body), answer.applied, answer.vary)
        }
        let minimal = try await send(prefer: "return=minimal")
        let full = try await send(prefer: nil)
        #expect(minimal.applied == "return=minimal")
        #expect(full.applied == nil)
        #expect(minimal.vary == "Prefer, Accept" && full.vary == "Prefer, Accept", "a cache must not answer one form for the other")

        let short = minimal.deltas[0].changes, long = full.deltas[0].changes
        #expect(short.map(\.status) == [.failed, .resolved])
        #expect(short.map(\.status) == long.map(\.status))
        #expect(short.map(\.changeId) == long.map(\.changeId))
        #expect(short.map(\.type) == long.map(\.type))
        #expect(short.map(\.failure) == long.map(\.failure))
        #expect(short.map(\.refreshedValues) == long.map(\.refreshedValues))
        #expect(short[0].failure?.location == "OrderDetails.js:2:28", "a refusal still says where")
        #expect(short.allSatisfy { $0.oldValues.isEmpty && $0.newValues.isEmpty && $0.edits == nil })
        #expect(long.allSatisfy { !$0.oldValues.isEmpty && !$0.newValues.isEmpty }, "without the preference nothing is left out")
    }

    /// Other preferences, and other values of `return`, get the full answer.
    @Test func anotherPreferenceGetsTheFullAnswer() async throws {
        for prefer in ["return=representation", "respond-async", "minimal", "return=minimalist"] {
            let answer = try await Self.answer(to: Data(#"{"deltas":[]}"#.utf8), prefer: prefer)
            #expect(answer.status == 200)
            #expect(answer.applied == nil, "\(prefer)")
        }
    }

    /// RFC 7240's grammar: several preferences in one field or in several fields, any case, spaces
    /// around `=`, a quoted value, parameters after `;`.
    @Test(arguments: [
        ("return=minimal", true),
        ("RETURN=MINIMAL", true),
        ("respond-async, return=minimal", true),
        ("return = \"minimal\"; foo=bar", true),
        ("wait=10,\treturn=minimal ", true),
        ("return=representation", false),
        ("return=\"minimal", false),
        ("return", false),
        ("=minimal", false),
        ("", false),
        ("return=minimal;", true),
        ("x-return=minimal", false),
    ])
    func thePreferenceIsReadAsTheRFCWritesIt(value: String, minimal: Bool) {
        var fields = HTTPFields()
        fields[PreferHeader.name] = value
        #expect(PreferHeader.asksForMinimalReturn(fields) == minimal)
    }

    @Test func aPreferenceInASecondFieldCounts() {
        var fields = HTTPFields()
        fields.append(HTTPFields.Element(name: PreferHeader.name, value: "respond-async"))
        fields.append(HTTPFields.Element(name: PreferHeader.name, value: "return=minimal"))
        #expect(PreferHeader.asksForMinimalReturn(fields))
    }

    /// An UpdateData to a fresh server, logged in as ann.
    static func answer(to body: Data, prefer: String?) async throws -> Answer {
        let server = try HTTPProtocolTests.Server()
        let result = Holder()
        try await server.test { client in
            let token = try #require(try await HTTPProtocolTests.login(client))
            let response = try await client.request("/v2/DataService/UpdateData", body: body, token: token,
                                                    headers: prefer.map { ["Prefer": $0] } ?? [:])
            await result.keep(Answer(status: response.status, body: response.body,
                                     applied: response.header("Preference-Applied"), vary: response.header("Vary")))
        }
        return try #require(await result.answer)
    }

    struct Answer: Sendable {
        let status: Int, body: Data, applied: String?, vary: String?
    }

    /// The answer the server's test closure got, handed out after it ended.
    actor Holder {
        private(set) var answer: Answer?
        func keep(_ answer: Answer) { self.answer = answer }
    }
}

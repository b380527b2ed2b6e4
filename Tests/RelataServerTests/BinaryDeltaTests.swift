import Foundation
import Relata
@testable import RelataServer
import Testing

/// UpdateData in the binary form (`DeltaBinary`) over a real socket: chosen by `Content-Type` for
/// the request and `Accept` for the answer, each on its own; the server makes of it exactly what
/// it makes of the JSON, and refuses damaged bytes as it refuses damaged JSON.
@Suite(.timeLimit(.minutes(5))) struct BinaryDeltaTests {
    /// A delta with a change the server's rule refuses and one it stores.
    static func delta() throws -> Delta {
        let details = try DataServiceTests.clientTables().details
        try details.rows[0].setValue(-5, forKey: "Quantity")
        try details.rows[2].setValue(8, forKey: "Quantity")
        return try details.makeDelta()
    }

    /// An UpdateData to a fresh server, logged in as ann, with the given body and headers.
    static func send(_ body: Data, headers: [String: String]) async throws -> MinimalAnswerTests.Answer {
        let server = try HTTPProtocolTests.Server()
        let result = MinimalAnswerTests.Holder()
        try await server.test { client in
            let token = try #require(try await HTTPProtocolTests.login(client))
            let response = try await client.request("/v2/DataService/UpdateData", body: body, token: token, headers: headers)
            await result.keep(.init(status: response.status, body: response.body, applied: response.header("Content-Type"),
                                    vary: response.header("Vary")))
        }
        return try #require(await result.answer)
    }

    @Test func theServerMakesOfBinaryDeltasWhatItMakesOfJSON() async throws {
        let delta = try Self.delta()
        let json = try await Self.send(DeltaJSON.encode([delta]), headers: [:])
        let binary = try await Self.send(DeltaBinary.encode([delta]),
                                         headers: ["Content-Type": DeltaBinary.contentType, "Accept": DeltaBinary.contentType])
        #expect(json.status == 200 && binary.status == 200)
        #expect(binary.applied == DeltaBinary.contentType, "the answer is in the form asked for")
        #expect(json.applied?.hasPrefix("application/json") == true)
        #expect(binary.vary?.contains("Accept") == true, "a cache must not answer one form for the other")
        let fromBinary = try DeltaBinary.decode(binary.body), fromJSON = try DeltaJSON.decode(json.body)
        #expect(fromBinary == fromJSON)
        #expect(fromBinary[0].changes.map(\.status) == [.failed, .resolved])
        #expect(fromBinary[0].changes[0].failure?.location == "OrderDetails.js:2:28")
    }

    @Test func eachDirectionChoosesItsOwnForm() async throws {
        let delta = try Self.delta()
        let binaryIn = try await Self.send(DeltaBinary.encode([delta]), headers: ["Content-Type": DeltaBinary.contentType])
        #expect(binaryIn.status == 200 && binaryIn.applied?.hasPrefix("application/json") == true)
        #expect(try DeltaJSON.decode(binaryIn.body)[0].changes.map(\.status) == [.failed, .resolved])
        let binaryOut = try await Self.send(DeltaJSON.encode([delta]),
                                            headers: ["Accept": "application/json, \(DeltaBinary.contentType)", "Prefer": "return=minimal"])
        #expect(binaryOut.status == 200 && binaryOut.applied == DeltaBinary.contentType)
        let minimal = try DeltaBinary.decode(binaryOut.body)[0].changes
        #expect(minimal.map(\.status) == [.failed, .resolved])
        #expect(minimal.allSatisfy { $0.oldValues.isEmpty && $0.newValues.isEmpty })
    }

    @Test func damagedBinaryIsRefusedSayingWhatAndTheServerGoesOn() async throws {
        let body = Data(try DeltaBinary.encode([Self.delta()]).dropLast(3))
        let server = try HTTPProtocolTests.Server()
        try await server.test { client in
            let token = try #require(try await HTTPProtocolTests.login(client))
            let binary = ["Content-Type": DeltaBinary.contentType]
            let cut = try await client.request("/v2/DataService/UpdateData", body: body, token: token, headers: binary)
            #expect(cut.status == 400)
            #expect(try HTTPProtocolTests.error(cut.body).message.contains("the data ends early"))
            let json = try await client.request("/v2/DataService/UpdateData", body: Data(#"{"deltas": []}"#.utf8), token: token, headers: binary)
            #expect(json.status == 400, "JSON sent as binary is not read as JSON")
            #expect(try HTTPProtocolTests.error(json.body).message.contains("RELATADL"))
            let good = try await client.request("/v2/DataService/UpdateData", body: DeltaBinary.encode([]), token: token, headers: binary)
            #expect(good.status == 200)
        }
    }
}

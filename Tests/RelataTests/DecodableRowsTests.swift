import Foundation
import Testing
@testable import Relata

@Suite struct DecodableRowsTests {
    struct Client: Decodable, Equatable {
        var clientId: Int
        var clientName: String
        var contactPhone: String?
        var clientDiscount: Double
    }

    @Test func rowsDecodeIntoStructs() throws {
        let clients = try makeClients()
        let decoded = try clients.rows(as: Client.self)
        #expect(decoded.first == Client(clientId: 1, clientName: "Acme", contactPhone: "555-0100", clientDiscount: 0.05))
        #expect(decoded[1].contactPhone == nil)
    }

    @Test func decodingErrorsNameTheFieldAndRow() throws {
        struct Strict: Decodable { var contactPhone: String }
        struct Missing: Decodable { var nothing: Int }
        let clients = try makeClients()
        let null = relataError { _ = try clients.rows(as: Strict.self) }
        #expect(null?.code == .decodingFailed)
        #expect(null?.row == "row (ClientId=2)")
        #expect(null?.message.contains("optional") == true)
        #expect(relataError { _ = try clients.rows(as: Missing.self) }?.field == "nothing")
    }
}

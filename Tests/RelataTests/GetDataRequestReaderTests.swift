import Foundation
import Testing
@testable import Relata

/// GetData's request read from its bytes: the same request `Codable` reads, and every malformed
/// or hostile document refused saying where.
@Suite struct GetDataRequestReaderTests {
    @Test func theSameRequestAsCodable() throws {
        let when = Date(timeIntervalSinceReferenceDate: 812_345_678.125)
        let requests = [
            DataRequest(table: "Clients"),
            DataRequest(table: "Orders", fields: ["OrderId", "Total"], where: "ClientId = :c AND Placed > :after AND Note = :n",
                        parameters: ["c": .integer(-7), "after": .date(when), "n": .string("quote \" é 😀"), "none": .null,
                                     "d": .decimal(Decimal(string: "12.50")!), "g": .guid(UUID()), "b": .boolean(false), "x": .double(0.5)],
                        maxRecords: 100),
            DataRequest(table: "Totals", sql: "SELECT ClientId, SUM(Total) AS Total FROM Orders GROUP BY ClientId", parameters: ["y": 2026]),
        ]
        for message in [ProtocolMessages.GetDataRequest(requests: requests), .init(requests: [], includeSchema: true),
                        .init(requests: requests, includeSchema: false)] {
            let bytes = try JSONEncoder().encode(message)
            let read = try ProtocolMessages.GetDataRequest.read(bytes)
            let decoded = try JSONDecoder().decode(ProtocolMessages.GetDataRequest.self, from: bytes)
            #expect(read.requests == decoded.requests && read.includeSchema == decoded.includeSchema)
            #expect(read.requests == message.requests)
        }
    }

    @Test func membersItDoesNotKnowAreReadPastAndNullIsAbsent() throws {
        let read = try ProtocolMessages.GetDataRequest.read(Data(#"""
            {"client": {"name": "curl", "tags": [1, 2.5, null, true]}, "requests": [{"table": "Clients", "fields": null,
             "where": null, "maxRecords": 7.0, "parameters": null, "sql": null, "hint": "fast"}], "includeSchema": null}
            """#.utf8))
        #expect(read.requests == [DataRequest(table: "Clients", maxRecords: 7)])
        #expect(read.includeSchema == nil)
    }

    @Test(arguments: [
        ("", "the JSON is not valid at byte 0"),
        (#"{"requests": ["#, "the JSON is not valid at byte 14"),
        (#"{"requests": [{"table": 5}]} x"#, "the JSON is not valid at byte 29: text follows the end of the document"),
        (#"[]"#, "the body: expected an object"),
        (#"{}"#, "the body: 'requests' is missing"),
        (#"{"requests": {"table": "Clients"}}"#, "requests: expected an array"),
        (#"{"requests": [{"table": 5}]}"#, "requests[0].table: expected a string"),
        (#"{"requests": [{"table": "A"}, {"where": "Id = 1"}]}"#, "requests[1]: 'table' is missing"),
        (#"{"requests": [{"table": "A", "fields": ["Id", 3]}]}"#, "requests[0].fields[1]: expected a string"),
        (#"{"requests": [{"table": "A", "maxRecords": 1.5}]}"#, "requests[0].maxRecords: 1.5 is not a whole number that fits 64 bits"),
        (#"{"requests": [{"table": "A", "maxRecords": 99999999999999999999}]}"#, "requests[0].maxRecords: 99999999999999999999 is not a whole number that fits 64 bits"),
        (#"{"requests": [{"table": "A", "parameters": {"id": 7}}]}"#, "requests[0].parameters.id: a value is null or an object with exactly one of the keys"),
        (#"{"requests": [{"table": "A", "parameters": {"id": {"integer": "7"}}}]}"#, "requests[0].parameters.id.integer: expected a whole number"),
        (#"{"requests": [{"table": "A", "parameters": {"when": {"date": "yesterday"}}}]}"#, "requests[0].parameters.when.date:"),
        (#"{"requests": [], "includeSchema": "yes"}"#, "includeSchema: expected true or false"),
        (String(repeating: "[", count: 300), "nested deeper than 256 levels"),
        (#"{"requests": [{"table": "A\ud800"}]}"#, "the JSON is not valid at byte"),
    ])
    func whatIsNotARequestIsRefusedSayingWhere(body: String, says: String) {
        #expect { try ProtocolMessages.GetDataRequest.read(Data(body.utf8)) } throws: { error in
            (error as? JSONScanner.Failure)?.description.contains(says) == true
        }
    }
}

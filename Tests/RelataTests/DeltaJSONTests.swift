import Foundation
import Testing
@testable import Relata

/// The protocol's delta JSON, read and written from bytes: the same JSON as `Codable`, both
/// ways, and every malformed or hostile document refused saying where.
@Suite struct DeltaJSONTests {
    static func sample() -> [Delta] {
        let when = Date(timeIntervalSinceReferenceDate: 812_345_678.125)
        let all: FieldValues = [
            "I": .integer(-9_223_372_036_854_775_807), "D": .double(0.1), "C": .decimal(Decimal(string: "123456789012345.6789")!),
            "B": .boolean(true), "S": .string("quote \" backslash \\ tab \t newline \n ü 😀 \u{1}"), "T": .date(when),
            "G": .guid(UUID()), "X": .blob(Data([0, 1, 255])), "N": .null,
        ]
        var failed = DeltaChange(changeId: 2, type: .update, oldValues: ["I": 1], newValues: ["I": 2])
        failed.fail(ChangeFailure(.refusal, "no \"way\"", event: "beforeUpdate", table: "T", row: "row 1", file: "T.js", line: 3, column: 9))
        return [
            Delta(tableName: "T", keyFields: ["I"], loggedFields: ["I", "S"], changes: [
                DeltaChange(changeId: 1, type: .insert, newValues: all, refreshedValues: ["I": 7]), failed,
                DeltaChange(changeId: 3, type: .delete, oldValues: all, status: .resolved),
            ]),
            Delta(tableName: "Empty", keyFields: [], loggedFields: [], changes: []),
        ]
    }

    @Test func theSameJSONAsCodableBothWays() throws {
        let deltas = Self.sample()
        let fast = try DeltaJSON.encode(deltas)
        #expect(try JSONDecoder().decode([String: [Delta]].self, from: fast)["deltas"] == deltas)
        #expect(try DeltaJSON.decode(JSONEncoder().encode(["deltas": deltas])) == deltas)
        #expect(try DeltaJSON.decode(fast) == deltas)
    }

    @Test func malformedDeltasAreRefusedSayingWhere() throws {
        func message(_ json: String) -> String? {
            do {
                _ = try DeltaJSON.decode(Array(json.utf8))
                return nil
            } catch let error as RelataError {
                #expect(error.code == .invalidDelta)
                return error.message
            } catch {
                return "\(error)"
            }
        }
        let change = #""changeId":1,"status":"pending","oldValues":{},"newValues":{},"refreshedValues":{}"#
        let head = #"{"deltas":[{"tableName":"T","keyFields":[],"loggedFields":[],"changes":["#
        #expect(message(#"{"deltas": ["#)?.contains("byte 12") == true)
        #expect(message(#"{"other": 1}"#) == "the body: 'deltas' is missing")
        #expect(message(head + "{\(change),\"type\":\"upsert\"}]}]}") == "deltas[0].changes[0].type: 'upsert' is not insert, update or delete")
        #expect(message(head + "{\(change)}]}]}") == "deltas[0].changes[0]: 'type' is missing")
        #expect(message(head + #"{"changeId":1,"type":"update","status":"pending","oldValues":{"A":{"integer":1.5}},"newValues":{},"refreshedValues":{}}]}]}"#)
                == "deltas[0].changes[0].oldValues.A.integer: 1.5 is not a whole number that fits 64 bits")
        #expect(message(head + #"{"changeId":1,"type":"update","status":"pending","oldValues":{"A":{"integer":1,"string":"x"}},"newValues":{},"refreshedValues":{}}]}]}"#)?
                    .hasPrefix("deltas[0].changes[0].oldValues.A: a value is null or an object with exactly one") == true)
        #expect(message(head + #"{"changeId":1,"type":"update","status":"pending","oldValues":{"A":{"decimal":"abc"}},"newValues":{},"refreshedValues":{}}]}]}"#)?
                    .hasPrefix("deltas[0].changes[0].oldValues.A.decimal:") == true)
        #expect(message(head + #"{"changeId":1,"type":"update","status":"pending","oldValues":{"A":{"color":"red"}},"newValues":{},"refreshedValues":{}}]}]}"#)
                == "deltas[0].changes[0].oldValues.A: 'color' is not a value type (integer, double, decimal, boolean, string, date, guid, blob)")
        #expect(message(#"{"deltas":[]} x"#)?.contains("text follows the end") == true)
        #expect(message(String(repeating: "[", count: 10_000))?.contains("nested deeper than 256") == true)
        #expect(message("{\"deltas\":[\"\u{1}\"]}")?.contains("control character") == true)
        #expect(try DeltaJSON.decode(Array(#"{"deltas":[]}"#.utf8)).isEmpty)
    }

    /// How a document that says something twice, or says it oddly, is read: the whole
    /// document is checked first, protocol members count once (the first; `null` is absent),
    /// field values as a dictionary is built (the last), members in any order and spelling.
    @Test func repeatedOddOrEscapedMembersAreReadOneWay() throws {
        func change(_ members: String) -> [UInt8] {
            Array(#"{"deltas":[{"tableName":"T","keyFields":[],"loggedFields":[],"changes":[{\#(members)}]}]}"#.utf8)
        }
        let plain = #""changeId":1,"type":"update","status":"pending","oldValues":{},"newValues":{},"refreshedValues":{}"#
        // The first of two members counts, even when it is null (the member is then absent).
        #expect(try DeltaJSON.decode(change(#""type":"delete","# + plain)).first?.changes.first?.type == .delete)
        #expect(throws: RelataError.self) { try DeltaJSON.decode(change(#""type":null,"# + plain)) }
        #expect(try DeltaJSON.decode(change(plain + #","message":null,"message":"later""#)).first?.changes.first?.message == nil)
        // Field values: the last of two equal names counts.
        let values = try DeltaJSON.decode(change(#""changeId":1,"type":"update","status":"pending","oldValues":{"A":{"integer":1},"A":{"integer":2}},"newValues":{},"refreshedValues":{}"#))
        #expect(values.first?.changes.first?.oldValues == ["A": .integer(2)])
        // Any order, space anywhere, keys spelled with escapes.
        let odd = try DeltaJSON.decode(Array(#" { "deltas" : [ { "changes" : [ { "refreshedValues" : { } , "newValues" : { "\u0041" : { "\u0069nteger" : 7 } } , "oldValues" : { } , "status" : "pending" , "\u0074ype" : "insert" , "changeId" : 3 } ] , "loggedFields" : [ "A" ] , "keyFields" : [ ] , "tableName" : "T" } ] } "#.utf8))
        #expect(odd == [Delta(tableName: "T", keyFields: [], loggedFields: ["A"], changes: [DeltaChange(changeId: 3, type: .insert, newValues: ["A": .integer(7)])])])
        // A syntax error is reported wherever it is, even after a change that is wrong in another way.
        let wrongThenBroken = #"{"deltas":[{"tableName":"T","keyFields":[],"loggedFields":[],"changes":[{"type":"upsert"}]},{"tableName":"U",]}"#
        let error = #expect(throws: RelataError.self) { try DeltaJSON.decode(Array(wrongThenBroken.utf8)) }
        #expect(error?.message == "the JSON is not valid at byte 109: expected a member name in quotes")
        // Whole numbers at and past 64 bits.
        for (json, expected) in [("9223372036854775807", Int64.max), ("-9223372036854775808", Int64.min), ("-0", 0), ("1e18", 1_000_000_000_000_000_000),
                                 ("123456789012345678", 123_456_789_012_345_678), ("7.0", 7), ("-9223372036854775808.0", Int64.min), ("12.5e1", 125)] {
            let deltas = try DeltaJSON.decode(Self.document(oldValue: #"{"integer":\#(json)}"#))
            #expect(deltas.first?.changes.first?.oldValues["A"] == .integer(expected), "\(json)")
        }
        for json in ["9223372036854775808", "-9223372036854775809", "-9223372036854775809.0", "-92233720368547758.09e2", "1.5", "1e19", "\"7\""] {
            #expect(throws: RelataError.self, "\(json)") { try DeltaJSON.decode(Self.document(oldValue: #"{"integer":\#(json)}"#)) }
        }
    }

    /// A document with one change whose old value `A` is the JSON `value`.
    static func document(oldValue value: String) -> [UInt8] {
        Array(#"{"deltas":[{"tableName":"T","keyFields":[],"loggedFields":[],"changes":[{"changeId":1,"type":"delete","status":"pending","oldValues":{"A":\#(value)},"newValues":{},"refreshedValues":{}}]}]}"#.utf8)
    }

    static func validate(_ json: String) throws {
        try Array(json.utf8).withUnsafeBufferPointer { try JSONScanner.validate($0) }
    }

    @Test func stringsAreReadExactly() throws {
        let cases: [(String, String)] = [
            (#""plain""#, "plain"), (#""\u00e9\u20ac\ud83d\ude00""#, "é€😀"), (#""a\/b\\c\"d\b\f\n\r\t""#, "a/b\\c\"d\u{8}\u{c}\n\r\t"),
            ("\"ü😀\"", "ü😀"),
        ]
        for (json, text) in cases {
            let deltas = try DeltaJSON.decode(Self.document(oldValue: #"{"string":\#(json)}"#))
            #expect(deltas.first?.changes.first?.oldValues["A"] == .string(text), "\(json)")
        }
        for bad in [#""\ud83d""#, #""\ude00x""#, #""\x""#, #""\u12""#, "\"abc"] {
            #expect(throws: JSONScanner.Failure.self, "\(bad)") { try Self.validate(bad) }
        }
        #expect(throws: JSONScanner.Failure.self) { try [UInt8]([0x22, 0xC3, 0x28, 0x22]).withUnsafeBufferPointer { try JSONScanner.validate($0) } }   // invalid UTF-8
        for (number, value) in [("0", 0.0), ("-0", -0.0), ("12.5", 12.5), ("1e9", 1e9), ("-1.25E-3", -1.25e-3)] {
            let deltas = try DeltaJSON.decode(Self.document(oldValue: #"{"double":\#(number)}"#))
            #expect(deltas.first?.changes.first?.oldValues["A"] == .double(value), "\(number)")
        }
        for bad in ["01", "1.", "-", "1e", ".5", "+1", "tru", "nul"] {
            #expect(throws: JSONScanner.Failure.self, "\(bad)") { try Self.validate(bad) }
        }
    }

    /// Every prefix and single-byte change of a delta document is read or refused, never a trap.
    @Test func noDamageReachesATrap() throws {
        let bytes = Array(try DeltaJSON.encode(Self.sample()))
        for length in stride(from: 0, to: bytes.count, by: 3) { _ = try? DeltaJSON.decode(bytes[0..<length]) }
        for index in bytes.indices {
            for replacement: UInt8 in [0, 0x22, 0x5C, 0x7B, 0xFF] {
                var damaged = bytes
                damaged[index] = replacement
                _ = try? DeltaJSON.decode(damaged)
            }
        }
    }
}

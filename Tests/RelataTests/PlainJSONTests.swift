import Foundation
import Testing
@testable import Relata

/// One plain JSON for field values: data files, edits, `--json`.
@Suite struct PlainJSONTests {
    @Test func decimalsKeepEveryDigitBothWays() throws {
        let fields = [FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("Amount", .decimal, precision: 30, scale: 2),
                      FieldDefinition("Ratio", .float)]
        let json = Data(#"[{"Id": 1, "Amount": 1234567890123456789.25, "Ratio": 0.1}]"#.utf8)
        let table = try DataTable(name: "Ledger", fields: fields, json: json)
        #expect(table.rows[0]["Amount"] == .decimal(Decimal(string: "1234567890123456789.25")!), "no Double on the way in")
        #expect(table.rows[0]["Ratio"] == .double(0.1))
        let written = try String(decoding: table.jsonData(), as: UTF8.self)
        #expect(written == #"[{"Amount":1234567890123456789.25,"Id":1,"Ratio":0.1}]"#, "no Double on the way out")
        let copy = try DataTable(name: "Ledger", fields: fields, json: table.jsonData())
        #expect(copy.rows[0]["Amount"] == table.rows[0]["Amount"])
    }

    /// A float read from JSON text is the double that text spells, to the last bit (Foundation's
    /// Decimal-to-Double conversion is not: 0.15000000000000002 became 0.15000000000000005, which
    /// the browser column of the differential caught).
    @Test func aFloatFromJSONIsTheDoubleItsDigitsSpell() throws {
        let field = FieldDefinition("Ratio", .float)
        for text in ["0.15000000000000002", "0.1", "1e-7", "123456.789012345678", "2.2250738585072014e-308", "-0.30000000000000004"] {
            let raw = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
            #expect(try field.value(fromJSON: raw) == .double(Double(text)!), "\(text)")
        }
    }

    @Test func everyValueHasOnePlainForm() throws {
        let date = try #require(ISO8601.date(from: "2026-11-23T10:00:00Z"))
        let values: [(Value, String)] = [
            (.null, "null"), (.integer(7), "7"), (.boolean(true), "true"), (.string("a/b"), #""a\/b""#),
            (.decimal(Decimal(string: "19.99")!), "19.99"), (.date(date), #""2026-11-23T10:00:00Z""#),
        ]
        for (value, text) in values {
            let encoded = try String(decoding: JSONEncoder().encode(JSONValue(value)), as: UTF8.self)
            #expect(encoded == text || encoded == text.replacingOccurrences(of: "\\/", with: "/"), "\(value)")
        }
    }
}

/// Table data on the wire: plain JSON per value, read back exactly by the field types.
@Suite struct TableDataTests {
    @Test func everyTypeCrossesTheWireExactly() throws {
        let fields = [
            FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("Price", .currency), FieldDefinition("When", .dateTime),
            FieldDefinition("Key", .guid), FieldDefinition("Bytes", .blob), FieldDefinition("Note", .string), FieldDefinition("Ok", .boolean),
            FieldDefinition("Ratio", .float),
        ]
        let when = try #require(ISO8601.date(from: "2026-11-23T10:00:00.123456Z"))
        let data = TableData(name: "T", fields: fields, rows: [
            [1, .decimal(Decimal(string: "123456789012345.6789")!), .date(when), .guid(UUID()), .blob(Data([0, 255, 7])), "ü \"q\"", true, 0.1],
            [2, .null, .null, .null, .null, .null, .null, .null],
        ])
        let decoded = try JSONDecoder().decode(TableData.self, from: JSONEncoder().encode(data))
        #expect(decoded == data)
        let table = try DataTable(decoded)
        #expect(table.rows[0]["Price"] == .decimal(Decimal(string: "123456789012345.6789")!))
        #expect(try TableData(table) == data)
    }

    @Test func aRowThatDoesNotFitItsFieldsIsRefusedNamingIt() {
        let json = #"{"name":"T","fields":[{"name":"Id","type":"integer"}],"rows":[[1],[1,2]]}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(TableData.self, from: Data(json.utf8)) }
        let wrong = #"{"name":"T","fields":[{"name":"Id","type":"integer"}],"rows":[["x"]]}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(TableData.self, from: Data(wrong.utf8)) }
    }
}

import Foundation
import Testing
@testable import Relata

@Suite struct ValueTests {
    static let everyKind: [Value] = [
        .null, .integer(-42), .double(2.5), .decimal(Decimal(string: "12.345")!), .boolean(true),
        .string("héllo, \"world\""), .date(Date(microsecondsSince1970: 1_700_000_000_123_000)),
        .date(Date(microsecondsSince1970: 1_700_000_000_000_124)),
        .guid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!), .blob(Data([0, 1, 2, 255])),
    ]

    @Test func nullIsDistinctFromEveryValue() {
        for value in Self.everyKind where !value.isNull {
            #expect(value != .null)
        }
        #expect(Value.string("") != .null)
        #expect(Value.integer(0) != .null)
    }

    @Test func codableRoundTripOfEveryKind() throws {
        let data = try JSONEncoder().encode(Self.everyKind)
        let decoded = try JSONDecoder().decode([Value].self, from: data)
        #expect(decoded == Self.everyKind)
        #expect(String(decoding: try JSONEncoder().encode(Value.integer(5)), as: UTF8.self) == #"{"integer":5}"#)
    }

    @Test func everyDataTypeHasAStorage() throws {
        let samples: [DataType.Storage: Value] = [
            .integer: 1, .double: 1.5, .decimal: .decimal(1), .boolean: true, .string: "s",
            .date: .date(Date()), .guid: .guid(UUID()), .blob: .blob(Data([1])),
        ]
        for type in DataType.allCases {
            let sample = samples[type.storage]!
            #expect(try type.coerce(sample).kindName == sample.kindName, "\(type)")
            #expect(try type.coerce(.null) == .null)
        }
    }

    @Test func losslessCoercions() throws {
        #expect(try DataType.float.coerce(3) == .double(3))
        #expect(try DataType.integer.coerce(.double(4)) == 4)
        #expect(try DataType.currency.coerce(3) == .decimal(3))
        #expect(try DataType.decimal.coerce(0.25) == .decimal(Decimal(string: "0.25")!))
        #expect(try DataType.singleFloat.coerce(0.1) == .double(Double(Float(0.1))))
    }

    @Test func rejectedCoercions() {
        #expect(relataError { _ = try DataType.integer.coerce(.double(4.5)) }?.code == .typeMismatch)
        #expect(relataError { _ = try DataType.integer.coerce("4") }?.code == .typeMismatch)
        #expect(relataError { _ = try DataType.boolean.coerce(1) }?.code == .typeMismatch)
        #expect(relataError { _ = try DataType.dateTime.coerce("2024-01-01") }?.code == .typeMismatch)
        #expect(relataError { _ = try DataType.string.coerce(5) }?.code == .typeMismatch)
        #expect(relataError { _ = try DataType.guid.coerce("x") }?.code == .typeMismatch)
    }

    @Test func integerRanges() throws {
        #expect(try DataType.byte.coerce(255) == 255)
        #expect(relataError { _ = try DataType.byte.coerce(256) }?.code == .valueOutOfRange)
        #expect(relataError { _ = try DataType.shortInt.coerce(-129) }?.code == .valueOutOfRange)
        #expect(relataError { _ = try DataType.word.coerce(-1) }?.code == .valueOutOfRange)
        #expect(relataError { _ = try DataType.integer.coerce(.integer(Int64(Int32.max) + 1)) }?.code == .valueOutOfRange)
        #expect(try DataType.largeInt.coerce(.integer(.min)) == .integer(.min))
        #expect(try DataType.cardinal.coerce(.integer(Int64(UInt32.max))) == .integer(Int64(UInt32.max)))
    }

    /// The shortcut that leaves a value unconverted must never skip a conversion or a refusal.
    @Test func aValueKeptAsIsIsWhatCoercionGivesBack() throws {
        var candidates = Self.everyKind + [.boolean(false), .string(""), .string("a\u{0}b")]
        for double in [0.0, -0.0, 0.1, 1e300, -1e300, 3.4028235e38, 1e39, .nan, .infinity, -.infinity, .leastNonzeroMagnitude,
                       2.5, 70_000] {
            candidates.append(.double(double))
        }
        for type in DataType.allCases {
            guard let range = type.integerRange else { continue }
            for bound in [range.lowerBound, range.upperBound] {
                for step: Int64 in [-1, 0, 1] {
                    let (integer, overflow) = bound.addingReportingOverflow(step)
                    if !overflow { candidates.append(.integer(integer)) }
                }
            }
        }
        var kept = 0
        for type in DataType.allCases {
            for value in candidates where type.keepsAsIs(value) {
                kept += 1
                let coerced = try type.coerce(value)
                if case .double(let before) = value, case .double(let after) = coerced {
                    #expect(before.bitPattern == after.bitPattern, "\(type) keeps \(before) as is, coercion gives \(after)")
                } else {
                    #expect(coerced == value, "\(type) keeps \(value) as is, coercion gives \(coerced)")
                }
            }
        }
        #expect(kept > 100, "the shortcut is taken for the common cases")
        #expect(!DataType.float.keepsAsIs(.double(-0.0)) && !DataType.singleFloat.keepsAsIs(.double(0.5)))
        #expect(!DataType.byte.keepsAsIs(.integer(256)) && !DataType.float.keepsAsIs(.integer(2)))
    }

    @Test func decimalPrecisionAndScale() throws {
        let price = FieldDefinition("Price", .decimal, precision: 5, scale: 2)
        #expect(try price.validated(.decimal(Decimal(string: "999.99")!)) == .decimal(Decimal(string: "999.99")!))
        #expect(throws: CoercionFailure.self) { try price.validated(.decimal(Decimal(string: "1.234")!)) }
        #expect(throws: CoercionFailure.self) { try price.validated(.decimal(Decimal(string: "1000")!)) }
    }

    @Test func parsingText() throws {
        #expect(try DataType.boolean.parse("yes") == true)
        #expect(try DataType.dateTime.parse("2024-03-01") == .date(Date(timeIntervalSince1970: 1_709_251_200)))
        #expect(try DataType.guid.parse("{E621E1F8-C36C-495A-93FC-0C247A3E6E5F}").guidValue != nil)
        #expect(try DataType.blob.parse("AAEC") == .blob(Data([0, 1, 2])))
        #expect(throws: CoercionFailure.self) { try DataType.integer.parse("12a") }
    }

    /// Spaces and tabs at either end of a value's text do not count — ASCII ones and the other
    /// spaces Unicode has (a no-break space) alike — and a line break is no blank.
    @Test func textIsReadWithoutTheBlanksAtItsEnds() throws {
        let march = Value.date(Date(timeIntervalSince1970: 1_709_251_200))
        for text in [" 2024-03-01", "2024-03-01\t", "\u{00A0}2024-03-01\u{2003}", " \t 2024-03-01  "] {
            #expect(try DataType.dateTime.parse(text) == march, "\(text.debugDescription)")
            #expect(ISO8601.date(from: text) == march.dateValue, "\(text.debugDescription)")
        }
        #expect(try DataType.integer.parse("\t42 ") == 42)
        #expect(try DataType.decimal.parse(" 1.50") == .decimal(Decimal(string: "1.5")!))
        #expect(throws: CoercionFailure.self) { try DataType.integer.parse("42\n") }
        #expect(throws: CoercionFailure.self) { try DataType.dateTime.parse(" ") }
        #expect(try DataType.string.parse(" kept as sent ") == " kept as sent ", "a string keeps its blanks")
        #expect("".trimmingBlanks == "" && "\u{00A0}".trimmingBlanks == "")
    }

    /// A decimal's text is digits, a point, signs and an exponent, read the same in every locale;
    /// anything else is refused rather than read up to where it stops being a number.
    @Test func decimalsAreReadFromTheirDigitsOnly() throws {
        #expect(try DataType.decimal.parse("-1.25e2") == .decimal(Decimal(-125)))
        #expect(try DataType.decimal.parse(" 0.10 ") == .decimal(Decimal(string: "0.1")!))
        for text in ["1.5kg", "1,5", "", "١٢", "12 34", "0x1F"] {
            #expect(throws: CoercionFailure.self, "\(text.debugDescription)") { try DataType.decimal.parse(text) }
        }
    }

    @Test func swiftConversions() {
        #expect(Int(relataValue: 5) == 5)
        #expect(UInt8(relataValue: 300) == nil)
        #expect(Optional<String>(relataValue: .null) == .some(nil))
        #expect(5.relataValue == .integer(5))
        #expect(UUID(relataValue: "x") == nil)
    }
}

/// One date model: whole microseconds of UTC, the proleptic Gregorian calendar, one text.
@Suite struct DateTextTests {
    /// Every date reads back from its text as itself rounded to the microsecond, and that date
    /// writes the same text again; the float noise of a computed date never shows.
    @Test func everyDateRoundTripsThroughItsTextToTheMicrosecond() throws {
        var dates = [Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 1_700_000_000.5),
                     Date(timeIntervalSince1970: 1_700_000_000.123456), Date(timeIntervalSinceReferenceDate: 123.000_000_1),
                     Date(timeIntervalSinceReferenceDate: -3_000_000_000.25), Date(timeIntervalSinceReferenceDate: 4e9 + 1e-6),
                     Date(timeIntervalSinceReferenceDate: 7.5e-5)]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 { dates.append(Date(timeIntervalSinceReferenceDate: Double.random(in: -4e9...4e9, using: &generator))) }
        for date in dates {
            let text = ISO8601.string(from: date)
            #expect(text.hasSuffix("Z") && !text.contains("e"), "\(text)")
            let read = try #require(ISO8601.date(from: text), "\(text)")
            #expect(read == date.roundedToMicroseconds, "\(text) for \(date.timeIntervalSinceReferenceDate)")
            #expect(ISO8601.string(from: read) == text)
            #expect(read.microsecondsSince1970 == date.microsecondsSince1970)
            let json = try JSONEncoder().encode(Value.date(date))
            #expect(String(decoding: json, as: UTF8.self).contains("\"date\":\""), "a date is always a string in JSON")
            #expect(try JSONDecoder().decode(Value.self, from: json) == .date(read))
        }
        #expect(ISO8601.string(from: Date(timeIntervalSince1970: 1_700_000_000)) == "2023-11-14T22:13:20Z")
        #expect(ISO8601.string(from: Date(timeIntervalSince1970: 1_700_000_000.5)) == "2023-11-14T22:13:20.5Z")
        // JavaScript's milliseconds, divided into seconds: no float noise in the text.
        #expect(ISO8601.string(from: Date(timeIntervalSince1970: 1_732_612_347_956 / 1000)) == "2024-11-26T09:12:27.956Z")
        #expect(ISO8601.string(from: Date(timeIntervalSinceReferenceDate: 0.123456 + 1e-9)) == "2001-01-01T00:00:00.123456Z")
    }

    /// The text has four digits of year, two of everything else, and the fraction's digits
    /// without trailing zeros, at every edge of the range it is written for.
    @Test func theTextHasItsDigitsAtEveryEdge() {
        let expected: [(Int64, String)] = [
            (-62_167_219_200_000_000, "0000-01-01T00:00:00Z"),
            (-62_135_596_800_000_000, "0001-01-01T00:00:00Z"),
            (-5_364_662_399_999_999, "1800-01-01T00:00:00.000001Z"),   // exact to the microsecond within 285 years of 2001
            (-1, "1969-12-31T23:59:59.999999Z"),
            (0, "1970-01-01T00:00:00Z"),
            (100_000, "1970-01-01T00:00:00.1Z"),
            (1_732_612_347_956_000, "2024-11-26T09:12:27.956Z"),
            (7_289_654_399_999_999, "2200-12-31T23:59:59.999999Z"),
            (253_402_300_799_000_000, "9999-12-31T23:59:59Z"),
        ]
        for (micros, text) in expected {
            #expect(ISO8601.string(from: Date(microsecondsSince1970: micros)) == text)
            #expect(ISO8601.date(from: text)?.microsecondsSince1970 == micros, "\(text)")
        }
        let past = ISO8601.string(from: Date(microsecondsSince1970: 253_402_300_800_000_000))
        #expect(past.hasPrefix("10000-01-01"), "a year past 9999 is Foundation's text: \(past)")
    }

    /// Digits past the microsecond are rounded (half up), the same on every site.
    @Test func finerFractionsRoundToTheMicrosecond() throws {
        func micros(_ text: String) -> Int64? { ISO8601.date(from: text)?.microsecondsSince1970 }
        let second = try #require(micros("2026-01-01T00:00:00Z"))
        #expect(micros("2026-01-01T00:00:00.1234567Z") == second + 123_457)
        #expect(micros("2026-01-01T00:00:00.1234564Z") == second + 123_456)
        #expect(micros("2026-01-01T00:00:00.9999995Z") == second + 1_000_000, "rounds up into the next second")
        #expect(micros("2026-01-01T00:00:00.5Z") == second + 500_000)
    }

    /// Years before 1583 are proleptic Gregorian: no Julian calendar, no ten lost days.
    @Test func everyYearIsProlepticGregorian() throws {
        let old = try #require(ISO8601.date(from: "1200-06-15T12:00:00Z"))
        #expect(ISO8601.string(from: old) == "1200-06-15T12:00:00Z")
        let before = try #require(ISO8601.date(from: "1582-10-04T00:00:00Z")), after = try #require(ISO8601.date(from: "1582-10-15T00:00:00Z"))
        #expect(after.timeIntervalSince(before) == 11 * 86_400)
        #expect(ISO8601.date(from: "0001-01-01T00:00:00Z")?.microsecondsSince1970 == -62_135_596_800_000_000)
        #expect(ISO8601.date(from: "1600-02-29T23:59:59Z") != nil && ISO8601.date(from: "1700-02-29T00:00:00Z") == nil)
    }

    /// Dates of years 1583 on, to the second, are the dates Foundation reads from the same text.
    @Test func modernDatesAreFoundationsDates() throws {
        var generator = SystemRandomNumberGenerator()
        let style = Date.ISO8601FormatStyle()
        for _ in 0..<5_000 {
            let whole = Double(Int64.random(in: -12_212_553_600...253_402_300_799, using: &generator))   // years 1583 to 9999
            let text = Date(timeIntervalSince1970: whole).formatted(style)
            #expect(ISO8601.date(from: text) == (try style.parse(text)), "\(text)")
            #expect(ISO8601.string(from: try style.parse(text)) == text)
        }
    }

    @Test func otherFormsAndWrongDates() throws {
        let utc = try #require(ISO8601.date(from: "2026-11-23T09:00:00Z"))
        #expect(ISO8601.date(from: " 2026-11-23T09:00:00Z ") == utc)
        #expect(ISO8601.date(from: "2026-11-23T10:00:00+01:00") == utc)
        #expect(ISO8601.date(from: "2026-11-23T04:00-0500") == utc)
        #expect(ISO8601.date(from: "2026-11-23") == ISO8601.date(from: "2026-11-23T00:00:00Z"))
        for notADate in ["2026-11-23T10:00:00.Z", "2026-11-23T10:00:00.1xZ", "2026-11-23X10:00:00Z", "2023-02-29T00:00:00Z",
                         "2026-13-01T00:00:00Z", "2026-11-23T24:00:00Z", "2026-11-23T10:00:00", "2026-11-23T10:00:00+25:00", "26-11-23", ""] {
            #expect(ISO8601.date(from: notADate) == nil, "\(notADate)")
        }
    }
}

@Suite struct StringEqualityTests {
    /// Strings are equal by code point, as in every SQL database (SQLite's BINARY, PostgreSQL's
    /// `COLLATE "C"`) — not by Swift's canonical equivalence. The DA SQL differential test found
    /// the difference: `"é"` and `"e\u{301}"` were one group in memory and two in a database.
    @Test func stringsAreEqualByCodePointNotByCanonicalEquivalence() throws {
        let composed = Value.string("\u{E9}"), decomposed = Value.string("e\u{301}")
        #expect("\u{E9}" == "e\u{301}", "Swift's String says equal")
        #expect(composed != decomposed)
        #expect(Set([composed, decomposed, .string("\u{E9}")]).count == 2)
        #expect(Value.string("abc") == .string(String("xabc".dropFirst())), "equal bytes, other storage")
        let table = try DataTable(name: "Words", fields: [FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("Word", .string)])
        try table.loadRows([[1, composed], [2, decomposed], [3, "f"]])
        #expect(try table.rows(where: "Word = :w", parameters: ["w": composed]).map { $0["Id"] } == [1])
        #expect(try table.rows(where: "Word <> 'e\u{301}'").map { $0["Id"] } == [1, 3])
        // By code point "e" + U+0301 < "f" < "é" (U+00E9); Swift's `<` puts "é" before "f".
        #expect(try table.rows(where: "Word < 'f'").map { $0["Id"] } == [2])
        #expect(try table.rows(where: "Word < '\u{E9}'").map { $0["Id"] } == [2, 3])
        let groups = try DataTable(query: DASQLQuery("SELECT Word, COUNT(*) AS N FROM Words GROUP BY Word"), over: [table])
        #expect(groups.rowCount == 3)
    }
}

/// NaN, the infinities and NUL in text are refused at the write on every site (no database,
/// JSON or decimal holds them), naming the field; -0 is stored as 0.
@Suite struct ValuesNoSiteStoresTests {
    @Test func theyAreRefusedAtTheWriteNamingTheField() throws {
        let table = try DataTable(name: "T", fields: [FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("F", .float),
                                                      FieldDefinition("S", .string), FieldDefinition("D", .decimal)])
        try table.loadRows([[1, 1.5, "a", .decimal(1)]])
        let row = table.rows[0]
        for (value, name) in [(Value.double(.nan), "NaN"), (.double(.infinity), "Infinity"), (.double(-.infinity), "-Infinity")] {
            let error = #expect(throws: RelataError.self) { try row.setValue(value, forKey: "F") }
            #expect(error?.description == "T.F, row (Id=1): \(name) is not a number a float field can hold", "\(error?.description ?? "")")
        }
        let nul = #expect(throws: RelataError.self) { try row.setValue("a\u{0}b", forKey: "S") }
        #expect(nul?.description.hasPrefix("T.S, row (Id=1): text holding NUL (U+0000) cannot be stored") == true)
        #expect(throws: RelataError.self) { try row.setValue(.double(.nan), forKey: "D") }
        #expect(row["F"] == 1.5 && row["S"] == "a", "a refused write leaves the row as it was")

        try row.setValue(.double(-0.0), forKey: "F")
        #expect(row["F"].doubleValue?.sign == .plus, "-0 is stored as 0")
        #expect(throws: RelataError.self) { try table.loadRows([[2, .double(.nan), "b", .decimal(2)]]) }
        #expect(throws: RelataError.self) { try DataType.float.value(parsing: "NaN") }
    }
}

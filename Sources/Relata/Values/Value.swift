import Foundation

/// A single field value of a ``DataTableRow``.
///
/// `Value` is the Swift representation of every data type of the original
/// system (see ``DataType``). SQL `NULL` is ``null`` and is distinct from every
/// other value, including the empty string and zero.
///
/// ```swift
/// let name: Value = "Acme"            // .string("Acme")
/// let discount: Value = 0.05          // .double(0.05)
/// row["ClientName"] = name
/// if row["ContactPhone"].isNull { print("no phone") }
/// ```
public enum Value: Sendable, Hashable {
    /// SQL NULL: no value at all.
    case null
    /// Every integer type (AutoInc, Integer, SmallInt, LargeInt, …).
    case integer(Int64)
    /// Float and SingleFloat.
    case double(Double)
    /// Decimal and Currency: exact base-10 numbers.
    case decimal(Decimal)
    /// Boolean.
    case boolean(Bool)
    /// String, FixedChar, Memo, WideString, FixedWideChar, WideMemo and Xml.
    case string(String)
    /// DateTime.
    case date(Date)
    /// Guid.
    case guid(UUID)
    /// Blob.
    case blob(Data)
}

extension Value {
    /// True for ``null``.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The integer payload, also from an integral `double` or `decimal`; nil otherwise.
    public var integerValue: Int64? {
        switch self {
        case .integer(let value): return value
        case .double(let value):
            guard value.rounded() == value, let exact = Int64(exactly: value) else { return nil }
            return exact
        case .decimal(let value):
            guard let exact = Int64(value.description) else { return nil }
            return exact
        default: return nil
        }
    }

    /// The payload of any numeric case as a `Double`; nil otherwise.
    public var doubleValue: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .double(let value): return value
        case .decimal(let value): return Double(value.description) ?? NSDecimalNumber(decimal: value).doubleValue
        default: return nil
        }
    }

    /// The payload of any numeric case as a `Decimal`; nil otherwise.
    public var decimalValue: Decimal? {
        switch self {
        case .integer(let value): return Decimal(value)
        case .double(let value): return value.isFinite ? Decimal(string: "\(value)") : nil
        case .decimal(let value): return value
        default: return nil
        }
    }

    /// The `String` payload; nil for every other case.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The `Bool` payload; nil for every other case.
    public var booleanValue: Bool? {
        if case .boolean(let value) = self { return value }
        return nil
    }

    /// The `Date` payload; nil for every other case.
    public var dateValue: Date? {
        if case .date(let value) = self { return value }
        return nil
    }

    /// The `UUID` payload; nil for every other case.
    public var guidValue: UUID? {
        if case .guid(let value) = self { return value }
        return nil
    }

    /// The `Data` payload; nil for every other case.
    public var blobValue: Data? {
        if case .blob(let value) = self { return value }
        return nil
    }

    /// A short name of the case, used in error messages ("integer", "string", …).
    public var kindName: String {
        switch self {
        case .null: return "NULL"
        case .integer: return "integer"
        case .double: return "double"
        case .decimal: return "decimal"
        case .boolean: return "boolean"
        case .string: return "string"
        case .date: return "date"
        case .guid: return "guid"
        case .blob: return "blob"
        }
    }
}

extension Value: CustomStringConvertible {
    /// A readable rendering: strings quoted, dates in ISO 8601, blobs by size.
    public var description: String {
        switch self {
        case .null: return "NULL"
        case .integer(let value): return String(value)
        case .double(let value): return String(value)
        case .decimal(let value): return value.description
        case .boolean(let value): return value ? "true" : "false"
        case .string(let value): return "'\(value)'"
        case .date(let value): return ISO8601.string(from: value)
        case .guid(let value): return value.uuidString
        case .blob(let value): return "<\(value.count) bytes>"
        }
    }

    /// The value as plain text, without quotes: what a CSV cell or a report shows.
    public var text: String {
        switch self {
        case .null: return ""
        case .string(let value): return value
        case .blob(let value): return value.base64EncodedString()
        default: return description
        }
    }
}

extension Value: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .boolean(value) }
}

/// ISO 8601, the one way Relata writes a date — in descriptions, JSON and CSV — exact to the
/// bit: the fraction of a second has as many digits as it takes to read back the same `Date`.
enum ISO8601 {
    /// Seconds between 1970 and 2001, the reference date `Date` counts from.
    private static let referenceOffset = 978_307_200.0

    static func string(from date: Date) -> String {
        let sinceReference = date.timeIntervalSinceReferenceDate
        guard sinceReference.isFinite, abs(sinceReference) < 1e15 else { return date.formatted(Date.ISO8601FormatStyle()) }
        let whole = sinceReference.rounded(.down)
        let fraction = sinceReference - whole   // exact: no rounding happens here
        let text = Date(timeIntervalSinceReferenceDate: whole).formatted(Date.ISO8601FormatStyle())
        guard fraction > 0, text.hasSuffix("Z") else { return text }
        return text.dropLast() + "." + digits(of: fraction) + "Z"
    }

    /// The digits after "0." of a number in (0, 1), the fewest that read back as the same `Double`.
    static func digits(of fraction: Double) -> String {
        let shortest = "\(fraction)"   // Swift prints the shortest form that round-trips
        if let exponentAt = shortest.firstIndex(of: "e") {
            let exponent = Int(shortest[shortest.index(after: exponentAt)...]) ?? 0
            let mantissa = shortest[..<exponentAt].filter(\.isNumber)
            return String(repeating: "0", count: max(-exponent - 1, 0)) + mantissa
        }
        return String(shortest.drop { $0 != "." }.dropFirst())
    }

    static func date(from text: String) -> Date? {
        if let date = utcDate(from: text) { return date }
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        // A fraction of a second is read exactly: whole seconds by the format style, the digits as a Double.
        if let dot = trimmed.firstIndex(of: "."), let zone = trimmed[dot...].firstIndex(where: { $0 == "Z" || $0 == "+" || $0 == "-" }) {
            let digits = trimmed[trimmed.index(after: dot)..<zone]
            if !digits.isEmpty, digits.allSatisfy(\.isNumber), let fraction = Double("0." + digits),
               let whole = try? Date.ISO8601FormatStyle().parse(String(trimmed[..<dot] + trimmed[zone...])) {
                return Date(timeIntervalSinceReferenceDate: whole.timeIntervalSinceReferenceDate + fraction)
            }
        }
        if let date = try? Date.ISO8601FormatStyle().parse(trimmed) { return date }
        // A plain calendar date ("2024-03-01") means midnight UTC.
        if trimmed.count == 10, let date = try? Date.ISO8601FormatStyle().year().month().day().parse(trimmed) {
            return date
        }
        return nil
    }

    /// The form Relata writes — `2026-11-23T10:00:00Z`, with or without a fraction of a
    /// second — read straight from its bytes, giving the same `Date` as the general path
    /// (whole seconds, then the fraction's digits as a `Double`); nil for any other form,
    /// and for years before 1583, which Foundation counts in the Julian calendar.
    private static func utcDate(from text: String) -> Date? {
        var text = text
        return text.withUTF8 { bytes -> Date? in
            guard bytes.count >= 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
                  bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"), bytes[bytes.count - 1] == UInt8(ascii: "Z") else { return nil }
            func number(_ range: Range<Int>) -> Int? {
                var value = 0
                for index in range {
                    let digit = Int(bytes[index]) - 48
                    guard (0...9).contains(digit) else { return nil }
                    value = value * 10 + digit
                }
                return value
            }
            guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
                  let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
                  year >= 1583, (1...12).contains(month), hour < 24, minute < 60, second < 60 else { return nil }
            let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
            let monthDays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
            guard day >= 1, day <= monthDays[month - 1] else { return nil }
            var fraction = 0.0
            if bytes.count > 20 {
                guard bytes[19] == UInt8(ascii: "."), bytes.count > 21 else { return nil }
                let digits = UnsafeBufferPointer(rebasing: bytes[20..<bytes.count - 1])
                guard digits.allSatisfy({ (48...57).contains($0) }), let value = Double("0." + String(decoding: digits, as: UTF8.self)) else { return nil }
                fraction = value
            } else if bytes[19] != UInt8(ascii: "Z") {
                return nil
            }
            let seconds = daysSince1970(year: year, month: month, day: day) * 86_400 + hour * 3_600 + minute * 60 + second
            return Date(timeIntervalSinceReferenceDate: Double(seconds - Int(referenceOffset)) + fraction)
        }
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let shifted = month <= 2 ? year - 1 : year   // years counted from March, so February comes last
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

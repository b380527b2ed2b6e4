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

/// ISO 8601, the one way Relata writes and reads a date — in descriptions, JSON, CSV and
/// SQLite — in the proleptic Gregorian calendar and UTC, to the microsecond
/// (`2026-11-23T10:00:00Z`, `2026-11-23T10:00:00.5Z`, `1200-06-15T12:00:00.123456Z`): the
/// fraction has the digits its microseconds need, and reading rounds any further digits.
enum ISO8601 {
    static func string(from date: Date) -> String {
        let (seconds, micros) = floorDivision(date.microsecondsSince1970, 1_000_000)
        let (days, secondOfDay) = floorDivision(seconds, 86_400)
        let (year, month, day) = civilDate(daysSince1970: days)
        guard (0...9999).contains(year) else { return date.formatted(Date.ISO8601FormatStyle()) }
        var fraction = micros, fractionDigits = micros > 0 ? 6 : 0
        while fractionDigits > 0, fraction % 10 == 0 {
            fraction /= 10
            fractionDigits -= 1
        }
        // YYYY-MM-DDTHH:MM:SS, the fraction without its trailing zeros, Z: at most 27 bytes,
        // written in place (joining a dozen small strings cost ten times as much).
        return String(unsafeUninitializedCapacity: 27) { text in
            var end = 0
            func put(_ value: Int64, digits: Int) {
                var value = value
                for position in stride(from: end + digits - 1, through: end, by: -1) {
                    text[position] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
                end += digits
            }
            func put(_ character: Unicode.Scalar) {
                text[end] = UInt8(ascii: character)
                end += 1
            }
            put(year, digits: 4); put("-"); put(month, digits: 2); put("-"); put(day, digits: 2); put("T")
            put(secondOfDay / 3_600, digits: 2); put(":"); put(secondOfDay / 60 % 60, digits: 2); put(":"); put(secondOfDay % 60, digits: 2)
            if fractionDigits > 0 {
                put(".")
                put(fraction, digits: fractionDigits)
            }
            put("Z")
            return end
        }
    }

    /// A date in ISO 8601: `2024-03-01` (midnight UTC), or a date and time with seconds or not,
    /// a fraction of a second or not, and `Z` or an offset (`+02:00`, `-0500`); nil for anything else.
    static func date(from text: String) -> Date? {
        var text = text.trimmingBlanks
        return text.withUTF8 { bytes -> Date? in
            var parser = DateParser(bytes: bytes)
            return parser.parse()
        }
    }

    /// Quotient and remainder with the remainder never negative.
    static func floorDivision(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
    static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shifted = month <= 2 ? year - 1 : year   // years counted from March, so February comes last
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date `days` after 1970-01-01.
    static func civilDate(daysSince1970 days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

/// Reads an ISO 8601 date from its bytes: every field checked, no calendar but the proleptic
/// Gregorian one, the fraction of a second rounded to the microsecond.
private struct DateParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var at = 0

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    mutating func parse() -> Date? {
        guard let year = number(4), take("-"), let month = number(2), take("-"), let day = number(2),
              (1...12).contains(month), day >= 1, day <= Self.days(inMonth: month, of: year) else { return nil }
        var micros = ISO8601.daysSince1970(year: year, month: month, day: day) * 86_400_000_000
        guard at < bytes.count else { return Date(microsecondsSince1970: micros) }
        guard take("T") || take("t") || take(" "), let hour = number(2), hour < 24, take(":"), let minute = number(2), minute < 60 else { return nil }
        var second: Int64 = 0
        if take(":") {
            guard let whole = number(2), whole < 60 else { return nil }
            second = whole
            if take(".") || take(",") {
                guard let fraction = fractionMicroseconds() else { return nil }
                micros += fraction
            }
        }
        micros += (hour * 3_600 + minute * 60 + second) * 1_000_000
        guard let offset = zoneOffsetSeconds(), at == bytes.count else { return nil }
        return Date(microsecondsSince1970: micros - offset * 1_000_000)
    }

    /// The digits of a fraction of a second as microseconds, rounded half up at the seventh digit.
    private mutating func fractionMicroseconds() -> Int64? {
        var micros: Int64 = 0, count = 0, roundUp = false
        while at < bytes.count, let digit = digit(bytes[at]) {
            if count < 6 { micros = micros * 10 + digit } else if count == 6 { roundUp = digit >= 5 }
            count += 1
            at += 1
        }
        guard count > 0 else { return nil }
        for _ in count..<max(count, 6) { micros *= 10 }
        return micros + (roundUp ? 1 : 0)
    }

    /// `Z`, `+HH:MM`, `-HHMM` or `+HH` as seconds east of UTC; nil for anything else.
    private mutating func zoneOffsetSeconds() -> Int64? {
        if take("Z") || take("z") { return 0 }
        let sign: Int64
        if take("+") { sign = 1 } else if take("-") { sign = -1 } else { return nil }
        guard let hours = number(2), hours < 24 else { return nil }
        var minutes: Int64 = 0
        if at < bytes.count {
            _ = take(":")
            guard let value = number(2), value < 60 else { return nil }
            minutes = value
        }
        return sign * (hours * 3_600 + minutes * 60)
    }

    private mutating func number(_ width: Int) -> Int64? {
        guard at + width <= bytes.count else { return nil }
        var value: Int64 = 0
        for index in at..<at + width {
            guard let digit = digit(bytes[index]) else { return nil }
            value = value * 10 + digit
        }
        at += width
        return value
    }

    private func digit(_ byte: UInt8) -> Int64? {
        (48...57).contains(byte) ? Int64(byte) - 48 : nil
    }

    private mutating func take(_ character: Unicode.Scalar) -> Bool {
        guard at < bytes.count, bytes[at] == UInt8(ascii: character) else { return false }
        at += 1
        return true
    }

    private static func days(inMonth month: Int64, of year: Int64) -> Int64 {
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][Int(month) - 1]
    }
}

import Foundation

/// Relata's one date model: an instant is a whole number of microseconds since
/// 1970-01-01T00:00:00Z, in the proleptic Gregorian calendar and UTC. Every site — a table, a
/// rule, JSON, a briefcase, SQLite, PostgreSQL — makes a date from its microseconds with
/// ``Foundation/Date/init(microsecondsSince1970:)``, so one instant is one `Date`, bit for bit,
/// and reads back as the same text everywhere.
///
/// JavaScript counts whole milliseconds: a rule sees a date's milliseconds (rounded down), and a
/// date a rule makes has no finer part.
///
/// ```swift
/// let date = Date(microsecondsSince1970: 1_732_612_345_956_000)
/// date.microsecondsSince1970                  // 1_732_612_345_956_000
/// Value.date(date).description                // "2024-11-26T09:12:25.956Z"
/// ```
extension Date {
    /// Microseconds from 1970-01-01 to 2001-01-01, the reference date `Date` counts from.
    private static let referenceMicroseconds: Int64 = 978_307_200_000_000
    /// Whole seconds either side of 2001 within which microseconds fit an `Int64` (about 285,000 years).
    private static let secondsLimit = 9_000_000_000_000.0

    /// The instant `microseconds` after 1970-01-01T00:00:00Z: the `Date` nearest to it (exact to
    /// the microsecond within about 285 years of 2001; beyond, as near as a `Date` holds).
    public init(microsecondsSince1970 microseconds: Int64) {
        let (sinceReference, overflow) = microseconds.subtractingReportingOverflow(Self.referenceMicroseconds)
        self.init(timeIntervalSinceReferenceDate: overflow ? Double(microseconds) / 1_000_000 - 978_307_200 : Double(sinceReference) / 1_000_000)
    }

    /// The whole microseconds since 1970-01-01T00:00:00Z nearest to this date (clamped to
    /// about 285,000 years either side).
    public var microsecondsSince1970: Int64 {
        let sinceReference = timeIntervalSinceReferenceDate
        guard !sinceReference.isNaN else { return 0 }
        let whole = min(max(sinceReference.rounded(.down), -Self.secondsLimit), Self.secondsLimit)
        let fraction = abs(whole) < Self.secondsLimit ? sinceReference - whole : 0   // exact: no rounding happens here
        return Int64(whole) * 1_000_000 + Int64((fraction * 1_000_000).rounded()) + Self.referenceMicroseconds
    }

    /// This date as Relata holds it: rounded to the nearest whole microsecond.
    public var roundedToMicroseconds: Date {
        Date(microsecondsSince1970: microsecondsSince1970)
    }

    /// The date as JavaScript counts it: whole milliseconds since 1970, rounded down.
    package var javaScriptTime: Double {
        let (milliseconds, remainder) = microsecondsSince1970.quotientAndRemainder(dividingBy: 1_000)
        return Double(remainder < 0 ? milliseconds - 1 : milliseconds)
    }

    /// The date a JavaScript time value (whole milliseconds since 1970) stands for; nil for an
    /// invalid date (NaN) or one beyond JavaScript's range.
    package init?(javaScriptTime milliseconds: Double) {
        guard milliseconds.isFinite, abs(milliseconds) <= 8.64e15 else { return nil }
        self.init(microsecondsSince1970: Int64(milliseconds.rounded(.down)) * 1_000)
    }
}

import Foundation

/// Why a value does not fit a data type; the table turns it into a ``RelataError``.
struct CoercionFailure: Error {
    let code: RelataError.Code
    let message: String
}

extension DataType {
    /// Converts a value into this type's storage, or throws a ``RelataError``.
    ///
    /// Lossless conversions are accepted (an integer into a Float or Decimal
    /// field, an integral double into an Integer field); everything else is a
    /// type mismatch, and integers outside the type's range are out of range.
    ///
    /// ```swift
    /// try DataType.float.coerce(.integer(2))      // .double(2.0)
    /// try DataType.smallInt.coerce(.integer(70000)) // throws valueOutOfRange
    /// ```
    public func coerce(_ value: Value) throws -> Value {
        do throws(CoercionFailure) {
            return try coerced(value)
        } catch {
            throw RelataError(error.code, error.message)
        }
    }

    func coerced(_ value: Value) throws(CoercionFailure) -> Value {
        if value.isNull { return .null }
        switch storage {
        case .integer:
            guard let integer = value.integerValue else { throw mismatch(value) }
            if let range = integerRange, !range.contains(integer) {
                throw CoercionFailure(code: .valueOutOfRange,
                                      message: "\(integer) is out of range for \(rawValue) (\(range.lowerBound)...\(range.upperBound))")
            }
            return .integer(integer)
        case .double:
            guard let double = value.doubleValue else { throw mismatch(value) }
            guard double.isFinite else { throw notANumber(double) }
            let stored = self == .singleFloat ? Double(Float(double)) : double
            guard stored.isFinite else { throw notANumber(stored) }
            return .double(stored == 0 ? 0 : stored)   // -0 is 0: databases and JSON do not all keep its sign
        case .decimal:
            guard let decimal = value.decimalValue else { throw mismatch(value) }
            guard !decimal.isNaN else { throw notANumber(.nan) }
            return .decimal(decimal)
        case .boolean:
            guard case .boolean = value else { throw mismatch(value) }
            return value
        case .string:
            guard case .string(let text) = value else { throw mismatch(value) }
            guard !text.utf8.contains(0) else {
                throw CoercionFailure(code: .typeMismatch, message: "text holding NUL (U+0000) cannot be stored: SQL databases end text there")
            }
            return value
        case .date:
            guard case .date(let date) = value else { throw mismatch(value) }
            return .date(date.roundedToMicroseconds)
        case .guid:
            guard case .guid = value else { throw mismatch(value) }
            return value
        case .blob:
            guard case .blob = value else { throw mismatch(value) }
            return value
        }
    }

    /// Whether ``coerced(_:)`` gives `value` back unchanged, told without making a value:
    /// NULL, and a value already in this type's storage that needs no conversion or check
    /// (a finite double other than -0, an integer in range, a boolean).
    @inline(__always) func keepsAsIs(_ value: Value) -> Bool {
        // A switch over the value alone: a tuple of (storage, value) copied every value it was asked about.
        switch value {
        case .null: return true
        case .boolean: return storage == .boolean
        case .double(let double): return storage == .double && self != .singleFloat && double.isFinite && !(double == 0 && double.sign == .minus)
        case .integer(let integer): return storage == .integer && (integerRange?.contains(integer) ?? true)
        default: return false
        }
    }

    /// NaN and the infinities are refused on every site, at the write: no database, JSON or
    /// decimal holds them.
    private func notANumber(_ double: Double) -> CoercionFailure {
        let name = double.isNaN ? "NaN" : double > 0 ? "Infinity" : "-Infinity"
        return CoercionFailure(code: .valueOutOfRange, message: "\(name) is not a number a \(rawValue) field can hold")
    }

    private func mismatch(_ value: Value) -> CoercionFailure {
        CoercionFailure(code: .typeMismatch, message: "\(value) (\(value.kindName)) is not a valid \(rawValue) value")
    }

    /// Parses text into a value of this type, as CSV and JSON import do.
    ///
    /// ```swift
    /// try DataType.dateTime.value(parsing: "2024-03-01")     // .date(…)
    /// try DataType.guid.value(parsing: "{E621E1F8-C36C-495A-93FC-0C247A3E6E5F}")
    /// ```
    /// - Throws: ``RelataError/Code/typeMismatch`` or ``RelataError/Code/valueOutOfRange``.
    public func value(parsing text: String) throws -> Value {
        do throws(CoercionFailure) {
            return try parse(text)
        } catch {
            throw RelataError(error.code, error.message)
        }
    }

    /// Parses text (a CSV cell, a JSON string) into a value of this type.
    ///
    /// Numbers use `.` as the decimal separator; booleans accept
    /// `true/false/yes/no/1/0`; dates are ISO 8601; blobs are Base64.
    func parse(_ text: String) throws(CoercionFailure) -> Value {
        let trimmed = storage == .string ? text : text.trimmingBlanks   // a string keeps its blanks
        switch storage {
        case .string:
            return .string(text)
        case .integer:
            guard let integer = Int64(trimmed) else { throw unparsable(text) }
            return try coerced(.integer(integer))
        case .double:
            guard let double = Double(trimmed) else { throw unparsable(text) }
            return try coerced(.double(double))
        case .decimal:
            // Only digits, a point, signs and an exponent: Foundation would read "1.5kg" as 1.5.
            let writesANumber = trimmed.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): true
                default: false
                }
            }
            guard !trimmed.isEmpty, writesANumber, let decimal = Decimal(string: trimmed, locale: .posix) else { throw unparsable(text) }
            return .decimal(decimal)
        case .boolean:
            switch trimmed.lowercased() {
            case "true", "yes", "1", "t", "y": return .boolean(true)
            case "false", "no", "0", "f", "n": return .boolean(false)
            default: throw unparsable(text)
            }
        case .date:
            guard let date = ISO8601.date(from: trimmed) else { throw unparsable(text) }
            return .date(date)
        case .guid:
            let bare = trimmed.hasPrefix("{") && trimmed.hasSuffix("}") ? String(trimmed.dropFirst().dropLast()) : trimmed
            guard let uuid = UUID(uuidString: bare) else { throw unparsable(text) }
            return .guid(uuid)
        case .blob:
            guard let data = Data(base64Encoded: trimmed) else { throw unparsable(text) }
            return .blob(data)
        }
    }

    private func unparsable(_ text: String) -> CoercionFailure {
        CoercionFailure(code: .typeMismatch, message: "'\(text)' is not a valid \(rawValue) value")
    }
}

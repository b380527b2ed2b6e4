import Foundation

/// A Swift type that converts to and from a ``Value``.
///
/// Relata's typed accessors use it:
///
/// ```swift
/// try row.setValue("Acme", forKey: "ClientName")
/// let name = try row.value(forKey: "ClientName", as: String.self)   // String?
/// ```
public protocol ValueConvertible {
    /// The value this instance stands for.
    var relataValue: Value { get }
    /// Creates an instance from a value, or nil when the value does not hold one.
    init?(relataValue: Value)
}

extension Value: ValueConvertible {
    public var relataValue: Value { self }
    public init?(relataValue: Value) { self = relataValue }
}

extension String: ValueConvertible {
    public var relataValue: Value { .string(self) }
    public init?(relataValue: Value) {
        guard let value = relataValue.stringValue else { return nil }
        self = value
    }
}

extension Bool: ValueConvertible {
    public var relataValue: Value { .boolean(self) }
    public init?(relataValue: Value) {
        guard let value = relataValue.booleanValue else { return nil }
        self = value
    }
}

extension Double: ValueConvertible {
    public var relataValue: Value { .double(self) }
    public init?(relataValue: Value) {
        guard let value = relataValue.doubleValue else { return nil }
        self = value
    }
}

extension Float: ValueConvertible {
    public var relataValue: Value { .double(Double(self)) }
    public init?(relataValue: Value) {
        guard let value = relataValue.doubleValue else { return nil }
        self = Float(value)
    }
}

extension Decimal: ValueConvertible {
    public var relataValue: Value { .decimal(self) }
    public init?(relataValue: Value) {
        guard let value = relataValue.decimalValue else { return nil }
        self = value
    }
}

extension Date: ValueConvertible {
    public var relataValue: Value { .date(self) }
    public init?(relataValue: Value) {
        guard let value = relataValue.dateValue else { return nil }
        self = value
    }
}

extension UUID: ValueConvertible {
    public var relataValue: Value { .guid(self) }
    public init?(relataValue: Value) {
        guard let value = relataValue.guidValue else { return nil }
        self = value
    }
}

extension Data: ValueConvertible {
    public var relataValue: Value { .blob(self) }
    public init?(relataValue: Value) {
        guard let value = relataValue.blobValue else { return nil }
        self = value
    }
}

extension ValueConvertible where Self: FixedWidthInteger {
    public var relataValue: Value {
        if let value = Int64(exactly: self) { return .integer(value) }
        return .decimal(Decimal(string: String(self))!)
    }
    public init?(relataValue: Value) {
        guard let value = relataValue.integerValue, let exact = Self(exactly: value) else { return nil }
        self = exact
    }
}

extension Int: ValueConvertible {}
extension Int8: ValueConvertible {}
extension Int16: ValueConvertible {}
extension Int32: ValueConvertible {}
extension Int64: ValueConvertible {}
extension UInt: ValueConvertible {}
extension UInt8: ValueConvertible {}
extension UInt16: ValueConvertible {}
extension UInt32: ValueConvertible {}
extension UInt64: ValueConvertible {}

extension Optional: ValueConvertible where Wrapped: ValueConvertible {
    public var relataValue: Value { self?.relataValue ?? .null }
    public init?(relataValue: Value) {
        if relataValue.isNull { self = .none; return }
        guard let wrapped = Wrapped(relataValue: relataValue) else { return nil }
        self = .some(wrapped)
    }
}

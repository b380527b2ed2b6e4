import Foundation

/// The definition of one stored field of a ``DataTable``.
///
/// ```swift
/// let fields = [
///     FieldDefinition("ClientId", .autoInc, primaryKey: true),
///     FieldDefinition("ClientName", .string, size: 50, required: true),
///     FieldDefinition("ClientDiscount", .float, defaultValue: 0.0),
/// ]
/// let clients = try DataTable(name: "Clients", fields: fields)
/// ```
///
/// Field definitions are `Codable`; in JSON only `name` and `type` are required:
/// `{"name": "ClientName", "type": "string", "size": 50, "required": true}`.
public struct FieldDefinition: Sendable, Hashable, Codable {
    /// The field's name, unique within its table (compared case-insensitively).
    public var name: String
    /// The field's data type.
    public var type: DataType
    /// The maximum length of a string (characters) or blob (bytes); 0 means unlimited.
    public var size: Int
    /// The total number of digits of a Decimal or Currency value; 0 means unchecked.
    public var precision: Int
    /// The number of digits after the decimal point of a Decimal or Currency value; 0 means unchecked.
    public var scale: Int
    /// NULL is not allowed.
    public var required: Bool
    /// The client may not write this field.
    public var readOnly: Bool
    /// The field is part of the primary key.
    public var primaryKey: Bool
    /// The value given to new rows when none is supplied.
    public var defaultValue: Value?
    /// Changes to the field are written by a data source (``Delta/loggedFields``). Primary-key
    /// fields always are. Every stored field's value travels in a delta, for the rules to read.
    public var logChanges: Bool
    /// A data server reads this field again from its database after an insert or update and
    /// sends it back, for a value the database itself sets (a trigger, a default). (Every other
    /// value the server stored differently from what the client sent comes back anyway.)
    public var serverAutoRefresh: Bool
    /// Free text for people reading the schema.
    public var fieldDescription: String

    /// The data source assigns the value (``DataType/autoInc`` and ``DataType/largeAutoInc``).
    public var autoIncrement: Bool { type.isAutoIncrement }

    /// Defines a field; every attribute but the name and type has a default.
    ///
    /// ```swift
    /// FieldDefinition("Price", .currency, precision: 10, scale: 2, required: true)
    /// ```
    public init(_ name: String, _ type: DataType, size: Int = 0, precision: Int = 0, scale: Int = 0,
                required: Bool = false, readOnly: Bool = false, primaryKey: Bool = false,
                defaultValue: Value? = nil, logChanges: Bool = true, serverAutoRefresh: Bool = false,
                description: String = "") {
        self.name = name
        self.type = type
        self.size = size
        self.precision = precision
        self.scale = scale
        self.required = required
        self.readOnly = readOnly
        self.primaryKey = primaryKey
        self.defaultValue = defaultValue
        self.logChanges = logChanges
        self.serverAutoRefresh = serverAutoRefresh
        self.fieldDescription = description
    }

    /// The keys a field definition has in JSON (what schema files may say of a field).
    package static var codingKeyNames: [String] { CodingKeys.allCases.map(\.rawValue) }

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case name, type, size, precision, scale, required, readOnly, primaryKey, defaultValue
        case logChanges, serverAutoRefresh, description
    }

    /// Decodes a field; `defaultValue` may be a tagged ``Value`` (`{"decimal": "12.50"}`)
    /// or a plain JSON value read as the field's type (`12.50`, `"open"`, `true`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(DataType.self, forKey: .type)
        var defaultValue: Value?
        if let tagged = try? container.decodeIfPresent(Value.self, forKey: .defaultValue) {
            defaultValue = tagged
        } else if let plain = try container.decodeIfPresent(JSONValue.self, forKey: .defaultValue) {
            do throws(CoercionFailure) {
                defaultValue = try FieldDefinition("", type).jsonValue(plain)
            } catch {
                throw DecodingError.dataCorruptedError(forKey: .defaultValue, in: container, debugDescription: error.message)
            }
        }
        self.init(
            try container.decode(String.self, forKey: .name),
            type,
            size: try container.decodeIfPresent(Int.self, forKey: .size) ?? 0,
            precision: try container.decodeIfPresent(Int.self, forKey: .precision) ?? 0,
            scale: try container.decodeIfPresent(Int.self, forKey: .scale) ?? 0,
            required: try container.decodeIfPresent(Bool.self, forKey: .required) ?? false,
            readOnly: try container.decodeIfPresent(Bool.self, forKey: .readOnly) ?? false,
            primaryKey: try container.decodeIfPresent(Bool.self, forKey: .primaryKey) ?? false,
            defaultValue: defaultValue,
            logChanges: try container.decodeIfPresent(Bool.self, forKey: .logChanges) ?? true,
            serverAutoRefresh: try container.decodeIfPresent(Bool.self, forKey: .serverAutoRefresh) ?? false,
            description: try container.decodeIfPresent(String.self, forKey: .description) ?? "")
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(type, forKey: .type)
        if size != 0 { try container.encode(size, forKey: .size) }
        if precision != 0 { try container.encode(precision, forKey: .precision) }
        if scale != 0 { try container.encode(scale, forKey: .scale) }
        if required { try container.encode(required, forKey: .required) }
        if readOnly { try container.encode(readOnly, forKey: .readOnly) }
        if primaryKey { try container.encode(primaryKey, forKey: .primaryKey) }
        try container.encodeIfPresent(defaultValue, forKey: .defaultValue)
        if !logChanges { try container.encode(logChanges, forKey: .logChanges) }
        if serverAutoRefresh { try container.encode(serverAutoRefresh, forKey: .serverAutoRefresh) }
        if !fieldDescription.isEmpty { try container.encode(fieldDescription, forKey: .description) }
    }
}

extension FieldDefinition {
    /// A value converted to this field's type, without the size, range and required checks
    /// (to compare values that came from outside with stored ones).
    package func coerced(_ value: Value) throws -> Value {
        do throws(CoercionFailure) {
            return try type.coerced(value)
        } catch {
            throw RelataError(error.code, error.message, field: name)
        }
    }

    /// A value of this field read from its text form (a decimal's digits, an ISO 8601 date,
    /// a GUID), as databases that store such values as text give them back.
    package func parsed(_ text: String) throws -> Value {
        do throws(CoercionFailure) {
            return try type.parse(text)
        } catch {
            throw RelataError(error.code, error.message, field: name)
        }
    }

    /// Checks a value against this field — type (with lossless coercion), size,
    /// precision and scale, required — and returns it coerced. Read-only is the
    /// table's business: a table refuses writes to read-only fields.
    ///
    /// ```swift
    /// try FieldDefinition("Code", .string, size: 3).validate("ABCD")   // throws valueTooLong
    /// ```
    public func validate(_ value: Value) throws -> Value {
        do throws(CoercionFailure) {
            return try validated(value)
        } catch {
            throw RelataError(error.code, error.message, field: name)
        }
    }

    /// Checks a value for this field: type (with coercion), size, precision and scale, required.
    /// Returns the coerced value. Read-only is the table's business, not the value's.
    func validated(_ value: Value) throws(CoercionFailure) -> Value {
        let coerced = try type.coerced(value)
        switch coerced {
        case .null:
            if required {
                throw CoercionFailure(code: .requiredValueMissing, message: "the field is required and cannot be NULL")
            }
        case .string(let string) where size > 0 && string.count > size:
            throw CoercionFailure(code: .valueTooLong,
                                  message: "value is \(string.count) characters, the field allows \(size)")
        case .blob(let data) where size > 0 && data.count > size:
            throw CoercionFailure(code: .valueTooLong, message: "value is \(data.count) bytes, the field allows \(size)")
        case .decimal(let decimal) where precision > 0 || scale > 0:
            try checkDigits(of: decimal)
        default:
            break
        }
        return coerced
    }

    private func checkDigits(of decimal: Decimal) throws(CoercionFailure) {
        let text = (decimal < 0 ? -decimal : decimal).description
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        let integerDigits = parts[0] == "0" ? 0 : parts[0].count
        let fractionDigits = parts.count > 1 ? parts[1].count : 0
        if scale > 0, fractionDigits > scale {
            throw CoercionFailure(code: .valueOutOfRange,
                                  message: "\(decimal) has \(fractionDigits) decimal places, the field allows \(scale)")
        }
        if precision > 0, integerDigits > precision - scale {
            throw CoercionFailure(code: .valueOutOfRange,
                                  message: "\(decimal) has \(integerDigits) integer digits, the field allows \(precision - scale) (precision \(precision), scale \(scale))")
        }
    }
}

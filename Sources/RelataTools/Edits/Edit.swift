import Foundation
import Relata
import RelataScript

/// One change to a table, as an edits file lists them (`relata run --edits`).
///
/// ```json
/// [
///   {"insert": "Orders", "values": {"ClientId": 3}, "as": "order"},
///   {"insert": "OrderDetails", "values": {"OrderId": {"ref": "order.OrderId"}, "ProductId": 12, "Quantity": 2}},
///   {"update": "Products", "key": 7, "values": {"UnitPrice": 99.5}},
///   {"delete": "Clients", "key": 40}
/// ]
/// ```
///
/// Values are plain JSON read as the field's type (dates as ISO 8601 strings);
/// `{"ref": "alias.Field"}` is a field of a row an earlier insert named with `as`
/// (a new row's temporary key, typically). `key` is the primary key: one value,
/// or an array for a key of several fields; each may be a `{"ref": …}` too, to update or
/// delete a row an earlier insert added.
public struct Edit: Codable, Sendable, Equatable {
    public enum Operation: String, Sendable, CaseIterable {
        case insert, update, delete
    }

    /// A field's new value: a JSON value, or a field of a row inserted earlier.
    public enum EditValue: Codable, Sendable, Equatable {
        case value(JSONValue)
        case reference(alias: String, field: String)

        public init(from decoder: any Decoder) throws {
            let raw = try JSONValue(from: decoder)
            if case .object(let members) = raw {
                guard members.count == 1, case .string(let reference)? = members["ref"],
                      let dot = reference.firstIndex(of: ".") else {
                    throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                        debugDescription: "an object value must be {\"ref\": \"alias.Field\"}"))
                }
                self = .reference(alias: String(reference[..<dot]), field: String(reference[reference.index(after: dot)...]))
            } else {
                self = .value(raw)
            }
        }

        /// The value as an edits file writes it: the JSON value, or `{"ref": "alias.Field"}`.
        public func encode(to encoder: any Encoder) throws {
            switch self {
            case .value(let value): try value.encode(to: encoder)
            case .reference(let alias, let field): try ["ref": "\(alias).\(field)"].encode(to: encoder)
            }
        }
    }

    public var operation: Operation
    public var table: String
    /// The primary key of the row to update or delete: values, or fields of rows inserted earlier.
    public var key: [EditValue]
    public var values: [String: EditValue]
    /// A name later edits use to refer to the row this insert adds.
    public var alias: String?

    public init(_ operation: Operation, table: String, key: [EditValue] = [], values: [String: EditValue] = [:], alias: String? = nil) {
        self.operation = operation
        self.table = table
        self.key = key
        self.values = values
        self.alias = alias
    }

    private enum CodingKeys: String, CodingKey {
        case insert, update, delete, key, values
        case alias = "as"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let named = Operation.allCases.filter { container.contains(CodingKeys(rawValue: $0.rawValue)!) }
        guard named.count == 1, let operation = named.first else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                debugDescription: "an edit names its table with exactly one of \"insert\", \"update\" or \"delete\""))
        }
        self.operation = operation
        table = try container.decode(String.self, forKey: CodingKeys(rawValue: operation.rawValue)!)
        if case .array? = try container.decodeIfPresent(JSONValue.self, forKey: .key) {
            key = try container.decode([EditValue].self, forKey: .key)
        } else {
            key = try container.decodeIfPresent(EditValue.self, forKey: .key).map { [$0] } ?? []
        }
        values = try container.decodeIfPresent([String: EditValue].self, forKey: .values) ?? [:]
        alias = try container.decodeIfPresent(String.self, forKey: .alias)
        if operation != .insert && key.isEmpty {
            throw DecodingError.dataCorruptedError(forKey: .key, in: container,
                                                   debugDescription: "\(operation.rawValue) needs the key of the row")
        }
        if operation == .update && values.isEmpty {
            throw DecodingError.dataCorruptedError(forKey: .values, in: container, debugDescription: "update needs values")
        }
    }

    /// The edit as an edits file writes it (`{"update": "Products", "key": 7, "values": {…}}`):
    /// what ``init(from:)`` reads back.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(table, forKey: CodingKeys(rawValue: operation.rawValue)!)
        if key.count == 1 { try container.encode(key[0], forKey: .key) } else if !key.isEmpty { try container.encode(key, forKey: .key) }
        if !values.isEmpty { try container.encode(values, forKey: .values) }
        try container.encodeIfPresent(alias, forKey: .alias)
    }

    /// Reads an edits file: a JSON array of edits.
    public static func list(contentsOf url: URL) throws -> [Edit] {
        try JSONFile.decode([Edit].self, from: url, what: "edits file", keys: .edits)
    }

    /// Reads the JSON text of an edits file; errors name it as `name`.
    ///
    /// ```swift
    /// let edits = try Edit.list(json: Data(#"[{"update": "Orders", "key": [1], "values": {"Status": "paid"}}]"#.utf8))
    /// ```
    public static func list(json: Data, name: String = "edits") throws -> [Edit] {
        try JSONFile.decode([Edit].self, from: json, name: name, what: "edits file", keys: .edits)
    }

    /// `insert Orders`, `update Products (key 7)`.
    public var summary: String {
        let keyText = key.isEmpty ? "" : " (key " + key.map(\.text).joined(separator: ", ") + ")"
        return "\(operation.rawValue) \(table)\(keyText)"
    }
}

extension Edit.EditValue {
    /// The value as the edits file wrote it: JSON, or `ref order.OrderId`.
    var text: String {
        switch self {
        case .value(let value): return value.text
        case .reference(let alias, let field): return "ref \(alias).\(field)"
        }
    }
}

extension JSONValue {
    /// The value as JSON text would show it.
    var text: String {
        switch self {
        case .null: return "null"
        case .bool(let value): return String(value)
        case .integer(let value): return String(value)
        case .number(let value): return String(value)
        case .decimal(let value): return value.description
        case .string(let value): return "\"\(value)\""
        case .array(let values): return "[" + values.map(\.text).joined(separator: ", ") + "]"
        case .object: return "{…}"
        }
    }
}

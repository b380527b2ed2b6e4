import Foundation

/// Loading tables from CSV and JSON, and writing them back out.
extension DataTable {
    /// Creates a table from CSV text whose first line names the columns.
    ///
    /// Columns are matched to fields by name (case-insensitively); a field with
    /// no column gets NULL. Cells are parsed by the field's type: numbers with
    /// `.`, booleans as `true/false/yes/no/1/0`, dates in ISO 8601, GUIDs, and
    /// blobs in Base64. An empty unquoted cell is NULL, `""` is the empty string.
    /// The rows are original data (``RowState/unchanged``).
    ///
    /// ```swift
    /// let csv = """
    /// ClientId,ClientName,ClientDiscount
    /// 1,Acme,0.05
    /// 2,"Globex, Inc.",
    /// """
    /// let clients = try DataTable(name: "Clients", fields: fields, csv: csv)
    /// ```
    /// - Throws: ``RelataError/Code/invalidImport`` naming the line, column and field,
    ///   for an unknown column, a cell that does not parse, or a line with too few or too many cells;
    ///   ``RelataError/Code/requiredValueMissing`` and ``RelataError/Code/constraintViolation``
    ///   naming the line for a missing required value or a primary key that is NULL or used twice.
    public convenience init(name: String, fields: [FieldDefinition], csv: String) throws {
        try self.init(name: name, fields: fields)
        let records: [CSVReader.Record]
        do { records = try CSVReader.records(in: csv) } catch {
            throw RelataError(.invalidImport, error.message, table: name, location: "line \(error.line)")
        }
        guard let header = records.first else { return }
        let columnFields = try header.cells.enumerated().map { position, cell in
            guard let name = cell, let field = fieldIndex(named: name.trimmingCharacters(in: .whitespaces)) else {
                throw RelataError(.invalidImport, "column \(position + 1) is named '\(cell ?? "")', which is not a field (fields: \(fields.map(\.name).joined(separator: ", ")))",
                                  table: self.name, location: "line \(header.line)")
            }
            return field
        }
        var remaining = records.dropFirst().makeIterator()
        // Fields without a column get their default value, as a database fills a column an insert leaves out.
        var unnamed = defaultValuesForLoad
        for field in columnFields { unnamed[field] = .null }
        try appendOriginalRows {
            guard let record = remaining.next() else { return nil }
            guard record.cells.count == columnFields.count else {
                throw RelataError(.invalidImport, "the line has \(record.cells.count) cells, the header names \(columnFields.count) columns",
                                  table: self.name, location: "line \(record.line)")
            }
            var values = unnamed
            for (position, cell) in record.cells.enumerated() {
                guard let cell else { continue }
                let field = columnFields[position]
                do throws(CoercionFailure) {
                    values[field] = try self.fields[field].type.parse(cell)
                } catch {
                    throw RelataError(.invalidImport, error.message, table: self.name, field: self.fields[field].name,
                                      location: "line \(record.line), column \(position + 1)")
                }
            }
            return (values, .line(record.line))
        }
    }

    /// Creates a table from JSON: an array of objects whose keys are field names.
    ///
    /// JSON numbers, strings and booleans are converted to the field's type;
    /// dates, GUIDs, decimals and Base64 blobs are given as strings; `null`
    /// or a missing key is NULL. The rows are original data.
    ///
    /// ```swift
    /// let json = #"[{"ClientId": 1, "ClientName": "Acme", "ClientDiscount": 0.05}]"#
    /// let clients = try DataTable(name: "Clients", fields: fields, json: Data(json.utf8))
    /// ```
    /// - Throws: ``RelataError/Code/invalidImport`` naming the object's position and the field.
    public convenience init(name: String, fields: [FieldDefinition], json: Data) throws {
        try self.init(name: name, fields: fields)
        let parsed: JSONValue
        do { parsed = try JSONDecoder().decode(JSONValue.self, from: json) } catch {
            throw RelataError(.invalidImport, "the JSON does not parse", table: name,
                              location: JSONSyntax.error(in: json) ?? "\(error)")
        }
        guard case .array(let objects) = parsed else {
            throw RelataError(.invalidImport, "the JSON must be an array of objects, one per row", table: name)
        }
        var position = -1
        try appendOriginalRows {
            position += 1
            guard position < objects.count else { return nil }
            guard case .object(let object) = objects[position] else {
                throw RelataError(.invalidImport, "element \(position + 1) of the array is not an object", table: self.name)
            }
            var values = self.defaultValuesForLoad
            for (key, raw) in object.sorted(by: { $0.key < $1.key }) {
                guard let field = self.fieldIndex(named: key) else {
                    throw RelataError(.invalidImport, "object \(position + 1) has key '\(key)', which is not a field (fields: \(self.fields.map(\.name).joined(separator: ", ")))",
                                      table: self.name, field: key)
                }
                do throws(CoercionFailure) {
                    values[field] = try self.fields[field].jsonValue(raw)
                } catch {
                    throw RelataError(.invalidImport, error.message, table: self.name, field: self.fields[field].name,
                                      location: "object \(position + 1)")
                }
            }
            return (values, .object(position + 1))
        }
    }

    /// The visible rows as a JSON array of objects, one key per stored field, in
    /// Relata's plain JSON (``JSONValue/init(_:)``): current values; decimals as
    /// numbers with their exact digits, dates in ISO 8601, GUIDs as strings, blobs in Base64.
    ///
    /// ```swift
    /// let data = try clients.jsonData()
    /// let copy = try DataTable(name: "Clients", fields: clients.fields, json: data)
    /// ```
    public func jsonData(prettyPrinted: Bool = false) throws -> Data {
        let objects: [JSONValue] = visibleSlots.map { slot in
            .object(Dictionary(uniqueKeysWithValues: fields.indices.map { (fields[$0].name, JSONValue(postedValue(slot: slot, field: $0))) }))
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = prettyPrinted ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(objects)
    }

    /// The visible rows as CSV with a header line (current values).
    public func csvText() -> String {
        var lines = [fields.map { CSVReader.escape($0.name) }.joined(separator: ",")]
        for slot in visibleSlots {
            lines.append(fields.indices.map { field in
                let value = postedValue(slot: slot, field: field)
                return value.isNull ? "" : CSVReader.escape(value.text)
            }.joined(separator: ","))
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

extension FieldDefinition {
    /// Converts a JSON value into a value of this field's type: strings are parsed
    /// as the type (dates in ISO 8601, GUIDs, Base64 blobs), numbers and booleans
    /// coerced without loss.
    ///
    /// - Throws: ``RelataError`` naming the field when the value does not fit.
    public func value(fromJSON raw: JSONValue) throws -> Value {
        do throws(CoercionFailure) {
            return try jsonValue(raw)
        } catch {
            throw RelataError(error.code, error.message, field: name)
        }
    }

    /// Converts a JSON value into this field's type.
    func jsonValue(_ raw: JSONValue) throws(CoercionFailure) -> Value {
        switch raw {
        case .null: return .null
        case .string(let string): return try type.parse(string)
        case .bool(let bool): return try type.coerced(.boolean(bool))
        case .integer(let integer): return try type.coerced(.integer(integer))
        case .number(let double):
            if type.storage == .decimal { return try type.parse(String(double)) }
            return try type.coerced(.double(double))
        case .decimal(let decimal):
            if type.storage == .decimal { return try type.coerced(.decimal(decimal)) }
            // Through its digits: Foundation's own Decimal-to-Double conversion is off in the last bits.
            return try type.coerced(.double(Value.decimal(decimal).doubleValue ?? .nan))
        case .array, .object:
            throw CoercionFailure(code: .typeMismatch, message: "a JSON array or object is not a valid \(type.rawValue) value")
        }
    }
}

/// Relata's plain JSON for field values — one representation for every external
/// format a person reads or writes: data files, edits files, `relata … --json`.
/// Decoded strictly (a number is never a boolean); a number with a fraction keeps
/// its exact digits (``decimal(_:)``), so a currency never passes through a `Double`.
/// (Where types must survive exactly — deltas on the wire, briefcases — ``Value``'s
/// own tagged `Codable` form is used instead.)
///
/// ```swift
/// let raw = try JSONDecoder().decode(JSONValue.self, from: Data("19.99".utf8))
/// let price = try FieldDefinition("UnitPrice", .currency).value(fromJSON: raw)   // .decimal(19.99)
/// ```
public enum JSONValue: Codable, Sendable, Hashable {
    case null, bool(Bool), integer(Int64), string(String)
    /// A binary floating-point number (a `double` field's value).
    case number(Double)
    /// A number with its exact decimal digits (read from JSON text, or a `decimal`/`currency` field's value).
    case decimal(Decimal)
    case array([JSONValue]), object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var elements: [JSONValue] = []
            while !array.isAtEnd { elements.append(try array.decode(JSONValue.self)) }
            self = .array(elements)
            return
        }
        if let object = try? decoder.container(keyedBy: AnyKey.self) {
            var members: [String: JSONValue] = [:]
            for key in object.allKeys { members[key.stringValue] = try object.decode(JSONValue.self, forKey: key) }
            self = .object(members)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() { self = .null }
        else if let bool = try? single.decode(Bool.self) { self = .bool(bool) }
        else if let integer = try? single.decode(Int64.self) { self = .integer(integer) }
        else if let decimal = try? single.decode(Decimal.self), decimal.isFinite { self = .decimal(decimal) }
        else if let double = try? single.decode(Double.self) { self = .number(double) }
        else { self = .string(try single.decode(String.self)) }
    }

    /// A value as plain JSON: numbers (decimals with their exact digits) and booleans as
    /// they are, NULL as null, and dates, GUIDs and blobs as their text (dates in ISO 8601,
    /// blobs in Base64).
    public init(_ value: Value) {
        switch value {
        case .null: self = .null
        case .integer(let integer): self = .integer(integer)
        case .double(let double): self = .number(double)
        case .boolean(let bool): self = .bool(bool)
        case .string(let string): self = .string(string)
        case .decimal(let decimal): self = .decimal(decimal)
        case .date, .guid, .blob: self = .string(value.text)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let bool): try container.encode(bool)
        case .integer(let integer): try container.encode(integer)
        case .number(let double): try container.encode(double)
        case .decimal(let decimal): try container.encode(decimal)
        case .string(let string): try container.encode(string)
        case .array(let values): try container.encode(values)
        case .object(let members): try container.encode(members)
        }
    }

    struct AnyKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

extension Value {
    /// A plain JSON value without a field to give it a type: a whole number is an integer,
    /// a number with a fraction a decimal (exact), text a string (session values in a users
    /// file, say).
    ///
    /// - Throws: ``RelataError/Code/typeMismatch`` for an array or an object.
    public init(untypedJSON json: JSONValue) throws {
        switch json {
        case .null: self = .null
        case .bool(let bool): self = .boolean(bool)
        case .integer(let integer): self = .integer(integer)
        case .number(let double): self = .double(double)
        case .decimal(let decimal): self = .decimal(decimal)
        case .string(let string): self = .string(string)
        case .array, .object: throw RelataError(.typeMismatch, "a value is a number, text, true/false or null, not an array or object")
        }
    }
}

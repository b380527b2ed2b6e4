import Foundation

extension DataTable {
    /// Decodes the visible rows into your own `Decodable` type, matching
    /// property names to field names (stored, calculated and lookup fields).
    ///
    /// ```swift
    /// struct Client: Decodable {
    ///     var clientId: Int          // matches ClientId (case-insensitively)
    ///     var clientName: String
    ///     var clientDiscount: Double?
    /// }
    /// let clients: [Client] = try table.rows(as: Client.self)
    /// ```
    /// Optionals accept NULL; `Date`, `UUID`, `Data` and `Decimal` properties read
    /// the matching value types.
    ///
    /// - Throws: ``RelataError/Code/decodingFailed`` naming the row and field.
    public func rows<T: Decodable>(as type: T.Type) throws -> [T] {
        try rows.map { try $0.decode(T.self) }
    }
}

extension DataTableRow {
    /// Decodes this row into a `Decodable` type; see ``DataTable/rows(as:)``.
    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        do {
            return try T(from: RowDecoder(row: self))
        } catch let error as RelataError {
            throw error
        } catch {
            throw RelataError(.decodingFailed, "cannot decode \(T.self): \(error)", table: table.name,
                              row: table.rowLabel(slot: slot))
        }
    }
}

/// A `Decoder` over one row: a keyed container whose keys are field names.
struct RowDecoder: Decoder {
    let row: DataTableRow
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(RowContainer<Key>(row: row))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw RelataError(.decodingFailed, "a row decodes into a struct or class with one property per field, not an array",
                          table: row.table.name)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw RelataError(.decodingFailed, "a row decodes into a struct or class with one property per field, not a single value",
                          table: row.table.name)
    }
}

struct RowContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let row: DataTableRow
    var codingPath: [any CodingKey] { [] }

    var allKeys: [Key] {
        (row.table.fields.map(\.name) + row.table.virtualFieldNames).compactMap { Key(stringValue: $0) }
    }

    func contains(_ key: Key) -> Bool {
        row.table.fieldIndex(named: key.stringValue) != nil || row.table.isVirtualField(named: key.stringValue)
    }

    private func value(_ key: Key) throws -> Value {
        guard contains(key) else {
            throw RelataError(.decodingFailed, "the property '\(key.stringValue)' matches no field of the table",
                              table: row.table.name, field: key.stringValue, row: row.table.rowLabel(slot: row.slot))
        }
        return try row.value(forKey: key.stringValue)
    }

    private func convert<T: ValueConvertible>(_ key: Key, _ type: T.Type = T.self) throws -> T {
        let value = try value(key)
        guard let converted = T(relataValue: value) else {
            throw RelataError(.decodingFailed,
                              value.isNull ? "the value is NULL; make the property optional" : "\(value) (\(value.kindName)) cannot be decoded as \(T.self)",
                              table: row.table.name, field: key.stringValue, row: row.table.rowLabel(slot: row.slot))
        }
        return converted
    }

    func decodeNil(forKey key: Key) throws -> Bool { try value(key).isNull }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try convert(key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try convert(key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try convert(key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try convert(key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try convert(key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try convert(key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try convert(key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try convert(key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try convert(key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try convert(key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try convert(key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try convert(key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try convert(key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try convert(key) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        if let convertible = T.self as? any ValueConvertible.Type {
            return try convert(key, convertible) as! T
        }
        throw RelataError(.decodingFailed, "a property of type \(T.self) cannot hold a field value; use String, a number, Bool, Date, UUID, Data, Decimal or Value",
                          table: row.table.name, field: key.stringValue, row: row.table.rowLabel(slot: row.slot))
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        throw RelataError(.decodingFailed, "fields hold single values, not nested objects", table: row.table.name, field: key.stringValue)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw RelataError(.decodingFailed, "fields hold single values, not arrays", table: row.table.name, field: key.stringValue)
    }

    func superDecoder() throws -> any Decoder { RowDecoder(row: row) }
    func superDecoder(forKey key: Key) throws -> any Decoder { RowDecoder(row: row) }
}

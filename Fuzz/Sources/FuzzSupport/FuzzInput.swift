import Foundation
import Relata

/// The bytes libFuzzer hands a target, as `Data` (libFuzzer may pass a null pointer for an empty input).
public func fuzzData(_ start: UnsafePointer<UInt8>?, _ count: Int) -> Data {
    guard let start, count > 0 else { return Data() }
    return Data(bytes: start, count: count)
}

/// The bytes as text, invalid UTF-8 repaired as a file reader would meet it.
public func fuzzText(_ start: UnsafePointer<UInt8>?, _ count: Int) -> String {
    String(decoding: fuzzData(start, count), as: UTF8.self)
}

/// A table's fields, one of every storage kind, for the table-data targets.
public let everyKindOfField = [
    FieldDefinition("Id", .integer, primaryKey: true),
    FieldDefinition("Name", .string, size: 20, required: true),
    FieldDefinition("Price", .currency, precision: 10, scale: 2),
    FieldDefinition("Ratio", .float),
    FieldDefinition("Small", .smallInt),
    FieldDefinition("Flag", .boolean),
    FieldDefinition("When", .dateTime),
    FieldDefinition("Token", .guid),
    FieldDefinition("Bytes", .blob),
]

import Foundation

extension JSONWriter {
    /// A value in its tagged form — `{"integer":5}`, `{"date":"2024-03-01T10:00:00Z"}`,
    /// `null` — as `Value`'s `Codable` form writes it.
    ///
    /// ```swift
    /// try writer.value(.integer(5), table: "Orders", field: "Quantity")   // {"integer":5}
    /// ```
    /// - Throws: ``RelataError/Code/invalidArgument`` for a floating value that JSON cannot
    ///   hold (infinite or NaN), naming the table and field.
    package mutating func value(_ value: Value, table: String, field: String) throws {
        switch value {
        case .null: raw("null")
        case .integer(let integer): raw(#"{"integer":\#(integer)}"#)
        case .double(let double):
            guard double.isFinite else {
                throw RelataError(.invalidArgument, "\(double) cannot be sent as JSON", table: table, field: field)
            }
            raw(#"{"double":\#(double)}"#)
        case .decimal(let decimal):
            raw(#"{"decimal":"#)
            string(decimal.description)
            raw("}")
        case .boolean(let bool): raw(bool ? #"{"boolean":true}"# : #"{"boolean":false}"#)
        case .string(let text):
            raw(#"{"string":"#)
            string(text)
            raw("}")
        case .date(let date):
            raw(#"{"date":"#)
            string(ISO8601.string(from: date))
            raw("}")
        case .guid(let uuid):
            raw(#"{"guid":"#)
            string(uuid.uuidString)
            raw("}")
        case .blob(let data):
            raw(#"{"blob":"#)
            string(data.base64EncodedString())
            raw("}")
        }
    }
}

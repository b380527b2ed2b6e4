import Foundation

extension FieldDefinition {
    /// Field definitions as their `Codable` form's JSON, keys sorted, written straight to
    /// bytes: a row stream's table frame carries them in every answer, and Foundation's
    /// encoder took longer over them than a one-row answer took over everything else.
    ///
    /// ```swift
    /// let json = try FieldDefinition.json([FieldDefinition("Id", .integer, primaryKey: true)], table: "Orders")
    /// // [{"name":"Id","primaryKey":true,"type":"integer"}]
    /// ```
    /// - Throws: ``RelataError/Code/invalidArgument`` for a default value JSON cannot hold
    ///   (an infinite or NaN floating value), naming the table and field.
    package static func json(_ fields: [FieldDefinition], table: String) throws -> [UInt8] {
        var writer = JSONWriter(capacity: 64 * fields.count + 2)
        writer.raw("[")
        for (index, field) in fields.enumerated() {
            if index > 0 { writer.raw(",") }
            // The members in the order of their names, as `JSONEncoder` with `.sortedKeys` writes them.
            writer.raw("{")
            if let defaultValue = field.defaultValue {
                writer.raw(#""defaultValue":"#)
                try writer.value(defaultValue, table: table, field: field.name)
                writer.raw(",")
            }
            if !field.fieldDescription.isEmpty {
                writer.raw(#""description":"#)
                writer.string(field.fieldDescription)
                writer.raw(",")
            }
            if !field.logChanges { writer.raw(#""logChanges":false,"#) }
            writer.raw(#""name":"#)
            writer.string(field.name)
            if field.precision != 0 { writer.raw(#","precision":\#(field.precision)"#) }
            if field.primaryKey { writer.raw(#","primaryKey":true"#) }
            if field.readOnly { writer.raw(#","readOnly":true"#) }
            if field.required { writer.raw(#","required":true"#) }
            if field.scale != 0 { writer.raw(#","scale":\#(field.scale)"#) }
            if field.serverAutoRefresh { writer.raw(#","serverAutoRefresh":true"#) }
            if field.size != 0 { writer.raw(#","size":\#(field.size)"#) }
            writer.raw(#","type":"#)
            writer.string(field.type.rawValue)
            writer.raw("}")
        }
        writer.raw("]")
        return writer.bytes
    }
}

import Foundation

/// Writes the frames of a ``RowStream``, each as bytes ready to send.
///
/// ```swift
/// var bytes = RowStreamWriter.start()
/// bytes += try RowStreamWriter.table(name: "Clients", fields: fields, expectedRows: 2)
/// bytes += try RowStreamWriter.rows([1, "Acme", 2, "Globex"], count: 2, fields: fields)
/// bytes += try RowStreamWriter.tableEnd(rows: 2) + RowStreamWriter.end()
/// ```
package enum RowStreamWriter {
    /// The magic and version every stream starts with.
    package static func start() -> [UInt8] {
        var writer = BinaryWriter(capacity: 12)
        for byte in RowStream.magic { writer.write(byte) }
        writer.write(RowStream.version)
        return writer.bytes
    }

    package static func schema(_ json: Data) throws -> [UInt8] {
        try frame(.schema) { $0.write(bytes: json) }
    }

    package static func table(name: String, fields: [FieldDefinition], expectedRows: Int) throws -> [UInt8] {
        let fieldJSON = try FieldDefinition.json(fields, table: name)
        return try frame(.table) { writer in
            writer.write(name)
            writer.write(bytes: fieldJSON)
            writer.write(UInt64(max(expectedRows, 0)))
        }
    }

    /// A batch of rows: `values` holds `count` rows of one value per field, each already of
    /// its field's type (a value of another type is sent as NULL).
    package static func rows(_ values: [Value], count: Int, fields: [FieldDefinition]) throws -> [UInt8] {
        precondition(values.count == count * fields.count, "a batch holds one value per field and row")
        var builder = RowStreamRowsBuilder(fields: fields)
        for row in 0..<count { builder.append(row: Array(values[row * fields.count..<(row + 1) * fields.count])) }
        return try rows(builder.take())
    }

    /// A batch of rows, each column as the briefcase stores it.
    package static func rows(_ rows: RowStreamRows) throws -> [UInt8] {
        try frame(.rows) { writer in
            writer.write(UInt32(rows.count))
            for column in rows.columns { column.writeBriefcase(into: &writer) }
        }
    }

    package static func tableEnd(rows: Int) throws -> [UInt8] {
        try frame(.tableEnd) { $0.write(UInt64(max(rows, 0))) }
    }

    package static func end() -> [UInt8] {
        // An empty payload always fits.
        (try? frame(.end) { _ in }) ?? []
    }

    /// The error answer (JSON) of a failure after the stream began.
    package static func error(_ json: Data) -> [UInt8] {
        (try? frame(.error) { $0.write(bytes: json.prefix(RowStream.maxFrameBytes - 8)) }) ?? []
    }

    /// A frame: its kind, its payload's length, the payload.
    ///
    /// - Throws: ``RelataError/Code/valueTooLong`` for a payload over ``RowStream/maxFrameBytes``.
    private static func frame(_ kind: RowStream.Kind, _ payload: (inout BinaryWriter) -> Void) throws -> [UInt8] {
        var writer = BinaryWriter()
        writer.write(kind.rawValue)
        writer.write(UInt32(0))
        payload(&writer)
        let length = writer.bytes.count - 5
        guard length <= RowStream.maxFrameBytes else {
            throw RelataError(.valueTooLong, "a frame of \(length) bytes is larger than the \(RowStream.maxFrameBytes) bytes a row stream allows (one row's values are too large)")
        }
        var bytes = writer.bytes
        withUnsafeBytes(of: UInt32(length).littleEndian) { raw in
            for index in 0..<4 { bytes[1 + index] = raw[index] }
        }
        return bytes
    }
}


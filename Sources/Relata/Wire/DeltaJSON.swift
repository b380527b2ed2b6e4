import Foundation

/// Deltas as the protocol's JSON — `{"deltas": [Delta…]}`, UpdateData's request and
/// answer — read and written straight from and to bytes. The JSON is exactly what
/// `Delta`'s `Codable` form reads and writes; this is that form without Foundation's
/// per-container cost, which for 100,000 changes is seconds.
///
/// ```swift
/// let body = try DeltaJSON.encode([orders.makeDelta()])
/// let deltas = try DeltaJSON.decode(body)
/// ```
public enum DeltaJSON {
    /// `{"deltas": […]}`, and with an apply id `{"apply": {"id": …, "madeAt": …}, "deltas": […]}`
    /// (an UpdateData request).
    ///
    /// A minimal form answers a client that keeps what it sent (UpdateData with
    /// `Prefer: return=minimal`): each change keeps its id, type, status, message, failure and
    /// refreshed values; its old and new values are written as `{}` and its edits left out, so
    /// the JSON still reads as deltas everywhere.
    ///
    /// ```swift
    /// let answer = try DeltaJSON.encode(processed, minimal: true)
    /// ```
    /// - Throws: ``RelataError/Code/invalidArgument`` for a floating value that JSON cannot
    ///   hold (infinite or NaN), naming the table and field.
    public static func encode(_ deltas: [Delta], apply: ApplyId? = nil, minimal: Bool = false) throws -> Data {
        var writer = JSONWriter(capacity: 256 * deltas.changeCount + 64)
        writer.raw("{")
        if let apply {
            writer.raw(#""apply":{"id":"#)
            writer.string(apply.id)
            writer.raw(#","madeAt":\#(apply.madeAt)},"#)
        }
        writer.raw(#""deltas":["#)
        for (index, delta) in deltas.enumerated() {
            if index > 0 { writer.raw(",") }
            try write(delta, minimal: minimal, into: &writer)
        }
        writer.raw("]}")
        return Data(writer.bytes)
    }

    /// Reads `{"deltas": […]}`; other members of the object are ignored.
    ///
    /// - Throws: ``RelataError/Code/invalidDelta`` saying where and what: invalid JSON
    ///   (with its byte offset) or a member missing or of the wrong kind
    ///   (`deltas[0].changes[3].type: 'upsert' is not insert, update or delete`).
    public static func decode(_ bytes: some Collection<UInt8>) throws -> [Delta] {
        try decodeRequest(bytes).deltas
    }

    /// Reads an UpdateData request: its deltas, and its apply id when it has one.
    ///
    /// - Throws: ``RelataError/Code/invalidDelta`` as ``decode(_:)`` does, and for an
    ///   `apply` member that is not a valid ``ApplyId``.
    public static func decodeRequest(_ bytes: some Collection<UInt8>) throws -> (apply: ApplyId?, deltas: [Delta]) {
        do {
            if let read = try bytes.withContiguousStorageIfAvailable(DeltaReader.request) { return read }
            return try Array(bytes).withUnsafeBufferPointer(DeltaReader.request)
        } catch let failure as JSONScanner.Failure {
            throw RelataError(.invalidDelta, failure.description)
        }
    }

    // MARK: Writing

    private static func write(_ delta: Delta, minimal: Bool, into writer: inout JSONWriter) throws {
        writer.raw(#"{"tableName":"#)
        writer.string(delta.tableName)
        writer.raw(#","keyFields":"#)
        strings(delta.keyFields, into: &writer)
        writer.raw(#","loggedFields":"#)
        strings(delta.loggedFields, into: &writer)
        writer.raw(#","changes":["#)
        var order = SortedFieldNames()
        for (index, change) in delta.changes.enumerated() {
            if index > 0 { writer.raw(",") }
            writer.raw(#"{"changeId":"#)
            writer.raw(String(change.changeId))
            writer.raw(#","type":"#)
            writer.string(change.type.rawValue)
            writer.raw(#","status":"#)
            writer.string(change.status.rawValue)
            if minimal {
                writer.raw(#","oldValues":{},"newValues":{}"#)
            } else {
                writer.raw(#","oldValues":"#)
                try values(change.oldValues, of: delta.tableName, order: &order, into: &writer)
                writer.raw(#","newValues":"#)
                try values(change.newValues, of: delta.tableName, order: &order, into: &writer)
            }
            writer.raw(#","refreshedValues":"#)
            try values(change.refreshedValues, of: delta.tableName, order: &order, into: &writer)
            if !minimal, let edits = change.edits {
                writer.raw(#","edits":["#)
                for (index, edit) in edits.enumerated() {
                    if index > 0 { writer.raw(",") }
                    writer.raw(#"{"sequence":\#(edit.sequence),"kind":"#)
                    writer.string(edit.kind.rawValue)
                    writer.raw(#","values":"#)
                    try values(edit.values, of: delta.tableName, order: &order, into: &writer)
                    writer.raw("}")
                }
                writer.raw("]")
            }
            if let message = change.message {
                writer.raw(#","message":"#)
                writer.string(message)
            }
            if let failure = change.failure {
                writer.raw(#","failure":{"kind":"#)
                writer.string(failure.kind.rawValue)
                writer.raw(#","message":"#)
                writer.string(failure.message)
                for (key, text) in [("event", failure.event), ("table", failure.table), ("row", failure.row), ("file", failure.file)] {
                    guard let text else { continue }
                    writer.raw(",\"\(key)\":")
                    writer.string(text)
                }
                for (key, number) in [("line", failure.line), ("column", failure.column)] {
                    guard let number else { continue }
                    writer.raw(",\"\(key)\":\(number)")
                }
                writer.raw("}")
            }
            writer.raw("}")
        }
        writer.raw("]}")
    }

    private static func strings(_ list: [String], into writer: inout JSONWriter) {
        writer.raw("[")
        for (index, text) in list.enumerated() {
            if index > 0 { writer.raw(",") }
            writer.string(text)
        }
        writer.raw("]")
    }

    private static func values(_ values: FieldValues, of table: String, order: inout SortedFieldNames, into writer: inout JSONWriter) throws {
        writer.raw("{")
        var first = true
        for slot in order.slots(of: values.names) {
            guard let value = values.value(at: slot) else { continue }
            if !first { writer.raw(",") }
            first = false
            let field = values.names.names[slot]
            writer.string(field)
            writer.raw(":")
            try writer.value(value, table: table, field: field)
        }
        writer.raw("}")
    }
}

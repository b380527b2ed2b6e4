/// A batch of changes as a short text that is the same however the batch was encoded — JSON or
/// binary, members in any order, a table's name in any case, its changes in any order — and
/// differs when any change, value (with its type) or edit differs. The server records it with a
/// batch's ``ApplyId`` to tell a retried batch from another batch sent under the same id.
///
/// The text is `2:` and the SHA-256 of a canonical binary form: tables by lower-cased name,
/// changes by id, each change's type, old values, new values and edits, values by field name,
/// each value as ``DeltaBinary`` writes it.
///
/// ```swift
/// let fingerprint = try DeltaFingerprint.of(deltas)   // "2:5f0c…"
/// ```
package enum DeltaFingerprint {
    /// What every fingerprint of this form begins with (earlier servers recorded other forms).
    package static let prefix = "2:"

    /// - Throws: ``RelataError/Code/invalidArgument`` for a floating value that is infinite or NaN,
    ///   which no request can carry.
    package static func of(_ deltas: [Delta]) throws -> String {
        try of(deltas, digest: SHA256.Running())
    }

    /// The fingerprint with the SHA-256 computed by `digest` (a data server's crypto library is
    /// quicker than the core's own): the same text as ``of(_:)``.
    package static func of(_ deltas: [Delta], digest: consuming some RunningDigest) throws -> String {
        // The form is hashed in parts of about `part` bytes, never held whole (it is megabytes for a large batch).
        let part = 1 << 16
        var out = BinaryWriter(capacity: part + 4096)
        let tables = deltas.map { $0.tableName.lowercased() }
        var order = SortedFieldNames()
        out.write(UInt64(deltas.count))
        for index in deltas.indices.sorted(by: { tables[$0] < tables[$1] }) {
            let delta = deltas[index], changes = delta.changes
            out.write(tables[index])
            out.write(UInt64(changes.count))
            for position in inIdOrder(changes) {
                try change(at: position, of: changes, table: delta.tableName, order: &order, into: &out)
                if out.bytes.count >= part {
                    out.bytes.withUnsafeBytes { digest.update($0) }
                    out.removeAll()
                }
            }
        }
        out.bytes.withUnsafeBytes { digest.update($0) }
        return prefix + digest.hex()
    }

    /// The changes' positions by id; read in place (sorting the changes would copy each).
    private static func inIdOrder(_ changes: [DeltaChange]) -> [Int] {
        let positions = Array(changes.indices)
        let ordered = changes.indices.dropFirst().allSatisfy { changes[$0 - 1].changeId < changes[$0].changeId }
        return ordered ? positions : positions.sorted { changes[$0].changeId < changes[$1].changeId }
    }

    /// Writes a change, read in place by its position (passing the change would copy it).
    private static func change(at position: Int, of changes: [DeltaChange], table: String, order: inout SortedFieldNames, into out: inout BinaryWriter) throws {
        var change: DeltaChange { changes[position] }   // each use reads one property in place
        out.write(Int64(change.changeId))
        out.write(DeltaBinaryWriter.code(of: change.type))
        try values(change.oldValues, of: table, order: &order, into: &out)
        try values(change.newValues, of: table, order: &order, into: &out)
        let edits = change.edits ?? []
        out.write(UInt64(edits.count))
        for edit in edits {
            out.write(edit.sequence)
            out.write(DeltaBinaryWriter.code(of: edit.kind))
            try values(edit.values, of: table, order: &order, into: &out)
        }
    }

    private static func values(_ values: FieldValues, of table: String, order: inout SortedFieldNames, into out: inout BinaryWriter) throws {
        out.write(UInt32(values.count))
        guard !values.isEmpty else { return }
        for slot in order.slots(of: values.names) {
            guard let value = values.value(at: slot) else { continue }
            let name = values.names.names[slot]
            out.write(name)
            try DeltaBinaryWriter.value(value, of: table, field: name, into: &out)
        }
    }
}

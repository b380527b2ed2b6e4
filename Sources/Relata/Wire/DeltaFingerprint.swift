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
        out.write(UInt64(deltas.count))
        for index in deltas.indices.sorted(by: { tables[$0] < tables[$1] }) {
            let delta = deltas[index], changes = delta.changes
            out.write(tables[index])
            out.write(UInt64(changes.count))
            for position in inIdOrder(changes) {
                try change(at: position, of: changes, table: delta.tableName, into: &out)
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
    private static func change(at position: Int, of changes: [DeltaChange], table: String, into out: inout BinaryWriter) throws {
        var change: DeltaChange { changes[position] }   // each use reads one property in place
        out.write(Int64(change.changeId))
        out.write(DeltaBinaryWriter.code(of: change.type))
        try values(change.oldValues, of: table, into: &out)
        try values(change.newValues, of: table, into: &out)
        let edits = change.edits ?? []
        out.write(UInt64(edits.count))
        for edit in edits {
            out.write(edit.sequence)
            out.write(DeltaBinaryWriter.code(of: edit.kind))
            try values(edit.values, of: table, into: &out)
        }
    }

    private static func values(_ values: [String: Value], of table: String, into out: inout BinaryWriter) throws {
        out.write(UInt32(values.count))
        func write(inOrder order: some Sequence<[String: Value].Index>) throws {
            for index in order {
                let (name, value) = values[index]
                out.write(name)
                try DeltaBinaryWriter.value(value, of: table, field: name, into: &out)
            }
        }
        guard values.count <= 32 else {
            try write(inOrder: values.indices.sorted { values[$0].key < values[$1].key })
            return
        }
        // A row's few entries sorted by name as positions on the stack: no entry copied, nothing allocated.
        try withUnsafeTemporaryAllocation(of: [String: Value].Index.self, capacity: values.count) { order in
            guard let order = order.baseAddress else { return }
            var count = 0
            defer { order.deinitialize(count: count) }
            for index in values.indices {
                var place = count
                while place > 0 && values[index].key < values[order[place - 1]].key {
                    (order + place).initialize(to: (order + place - 1).move())
                    place -= 1
                }
                (order + place).initialize(to: index)
                count += 1
            }
            try write(inOrder: UnsafeBufferPointer(start: order, count: count))
        }
    }
}

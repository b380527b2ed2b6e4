import Foundation

/// UpdateData's request and answer in binary (`Documentation/Protocol.md`): the same deltas
/// ``DeltaJSON`` carries — the same fields, values and rules, so either encoding gives the
/// server the same request — without text to write and scan. A 100,000-change apply spends
/// as long reading and writing its JSON as applying it; this is the row stream's sibling,
/// chosen by `Content-Type` (the request) and `Accept` (the answer).
///
///     "RELATADL"  version u32
///     apply       u8 (0 or 1), then id string, madeAt i64
///     deltas      count u64, each:
///       tableName string, keyFields strings, loggedFields strings,
///       names     strings: the field names the values below refer to by position
///       changes   count u64, each:
///         changeId i64, type u8 (insert 0, update 1, delete 2), status u8 (pending 0, resolved 1, failed 2),
///         parts u8 (bit 0 edits, bit 1 message, bit 2 failure),
///         oldValues, newValues, refreshedValues: values
///         edits     count u64, each: sequence i64, kind u8 (as type), values
///         message   string
///         failure   kind string, message string, present u8 (bits: event, table, row, file, line, column),
///                   then the present ones: strings, line i64, column i64
///     values      count u32, each: name u32 (a position in names), value
///     value       tag u8: 0 NULL, 1 integer i64, 2 double f64, 3 decimal string, 4 boolean u8,
///                 5 string string, 6 date string (ISO 8601, as the JSON), 7 GUID 16 bytes, 8 blob u64 length + bytes
///
/// Numbers are little-endian; a string is a u32 length and UTF-8; strings is a u64 count of them.
///
/// ```swift
/// let body = try DeltaBinary.encode([orders.makeDelta()])
/// let deltas = try DeltaBinary.decode(body)
/// ```
public enum DeltaBinary {
    /// The media type of the encoding (`Content-Type` of a request, `Accept` for the answer).
    public static let contentType = "application/vnd.relata.delta"
    static let magic = Array("RELATADL".utf8)
    static let version: UInt32 = 1

    enum Tag: UInt8 {
        case null = 0, integer, double, decimal, boolean, string, date, guid, blob
    }

    enum Parts {
        static let edits: UInt8 = 1, message: UInt8 = 2, failure: UInt8 = 4
    }

    /// The deltas (and an apply id: an UpdateData request), in the binary form.
    ///
    /// A minimal form answers a client that keeps what it sent, as ``DeltaJSON/encode(_:apply:minimal:)``'s
    /// does: each change keeps its id, type, status, message, failure and refreshed values; its
    /// old and new values are empty and its edits left out.
    ///
    /// ```swift
    /// let request = try DeltaBinary.encode([delta], apply: ApplyId())
    /// ```
    /// - Throws: ``RelataError/Code/invalidArgument`` for a floating value that JSON cannot hold
    ///   (infinite or NaN), naming the table and field: the binary form carries what the JSON does.
    public static func encode(_ deltas: [Delta], apply: ApplyId? = nil, minimal: Bool = false) throws -> Data {
        try encode(deltas, apply: apply) { _, _ in minimal ? .all : [] }
    }

    /// What a change's encoding leaves out (to be put back by its reader from elsewhere).
    package struct LeftOut: OptionSet, Sendable {
        package let rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }
        /// Its old and new values (written empty).
        package static let values = LeftOut(rawValue: 1)
        /// Its edits (written absent).
        package static let edits = LeftOut(rawValue: 2)
        package static let all: LeftOut = [.values, .edits]
    }

    /// The deltas in the binary form, each change leaving out what `leaveOut(delta, change)`
    /// says (by their positions): the minimal form leaves out everything but the outcome.
    ///
    /// ```swift
    /// let bytes = try DeltaBinary.encode(answer) { delta, change in sameAsSent(delta, change) ? .all : [] }
    /// ```
    package static func encode(_ deltas: [Delta], apply: ApplyId? = nil, leavingOut leaveOut: (_ delta: Int, _ change: Int) -> LeftOut) throws -> Data {
        var writer = DeltaBinaryWriter(capacity: 64 * deltas.changeCount + 64)
        try writer.message(deltas, apply: apply, leavingOut: leaveOut)
        return Data(writer.bytes)
    }

    /// Reads deltas the binary form holds.
    ///
    /// - Throws: ``RelataError/Code/invalidDelta`` saying where and what: data that ends early, a
    ///   count larger than the data, a name or tag out of range, text that is not UTF-8, a value
    ///   the JSON could not carry either.
    public static func decode(_ bytes: some Collection<UInt8>) throws -> [Delta] {
        try decodeRequest(bytes).deltas
    }

    /// Reads an UpdateData request: its deltas, and its apply id when it has one.
    ///
    /// ```swift
    /// let (apply, deltas) = try DeltaBinary.decodeRequest(body)
    /// ```
    /// - Throws: ``RelataError/Code/invalidDelta`` as ``decode(_:)`` does, and for an apply id
    ///   that is not a valid ``ApplyId``.
    public static func decodeRequest(_ bytes: some Collection<UInt8>) throws -> (apply: ApplyId?, deltas: [Delta]) {
        if let read = try bytes.withContiguousStorageIfAvailable({ try DeltaBinaryReader.request(UnsafeRawBufferPointer($0)) }) {
            return read
        }
        return try Array(bytes).withUnsafeBytes(DeltaBinaryReader.request)
    }
}

/// Writes ``DeltaBinary``'s form.
struct DeltaBinaryWriter {
    private var writer: BinaryWriter

    init(capacity: Int) { writer = BinaryWriter(capacity: capacity) }

    var bytes: [UInt8] { writer.bytes }

    mutating func message(_ deltas: [Delta], apply: ApplyId?, leavingOut leaveOut: (_ delta: Int, _ change: Int) -> DeltaBinary.LeftOut) throws {
        writer.reserve(more: DeltaBinary.magic.count)
        for byte in DeltaBinary.magic { writer.write(byte) }
        writer.write(DeltaBinary.version)
        writer.write(apply != nil)
        if let apply {
            writer.write(apply.id)
            writer.write(apply.madeAt)
        }
        writer.write(UInt64(deltas.count))
        for position in deltas.indices { try write(deltas[position]) { leaveOut(position, $0) } }
    }

    private mutating func write(_ delta: Delta, leavingOut leaveOut: (_ change: Int) -> DeltaBinary.LeftOut) throws {
        writer.write(delta.tableName)
        strings(delta.keyFields)
        strings(delta.loggedFields)
        // The names come before the changes that use them: the changes are written aside first.
        var names = WrittenNames()
        var changes = BinaryWriter(capacity: 64 * delta.changes.count)
        for index in delta.changes.indices {
            try change(at: index, of: delta, leavingOut: leaveOut(index), names: &names, into: &changes)
        }
        strings(names.list)
        writer.write(UInt64(delta.changes.count))
        writer.append(changes)
    }

    /// Writes a delta's change, read in place by its index (passing the change would copy it).
    private mutating func change(at index: Int, of delta: Delta, leavingOut leftOut: DeltaBinary.LeftOut, names: inout WrittenNames,
                                 into out: inout BinaryWriter) throws {
        let table = delta.tableName
        var change: DeltaChange { delta.changes[index] }   // each use reads one property in place
        out.write(Int64(change.changeId))
        out.write(Self.code(of: change.type))
        out.write(Self.code(of: change.status))
        let edits = leftOut.contains(.edits) ? nil : change.edits
        var parts: UInt8 = 0
        if edits != nil { parts |= DeltaBinary.Parts.edits }
        if change.message != nil { parts |= DeltaBinary.Parts.message }
        if change.failure != nil { parts |= DeltaBinary.Parts.failure }
        out.write(parts)
        let valuesLeftOut = leftOut.contains(.values)
        try values(valuesLeftOut ? [:] : change.oldValues, .old, of: table, names: &names, into: &out)
        try values(valuesLeftOut ? [:] : change.newValues, .new, of: table, names: &names, into: &out)
        try values(change.refreshedValues, .refreshed, of: table, names: &names, into: &out)
        if let edits {
            out.write(UInt64(edits.count))
            for edit in edits {
                out.write(edit.sequence)
                out.write(Self.code(of: edit.kind))
                try values(edit.values, .edit, of: table, names: &names, into: &out)
            }
        }
        if let message = change.message { out.write(message) }
        if let failure = change.failure {
            out.write(failure.kind.rawValue)
            out.write(failure.message)
            let texts = [failure.event, failure.table, failure.row, failure.file]
            let numbers = [failure.line, failure.column]
            var present: UInt8 = 0
            for (bit, isPresent) in (texts.map { $0 != nil } + numbers.map { $0 != nil }).enumerated() where isPresent {
                present |= 1 << UInt8(bit)
            }
            out.write(present)
            for text in texts { if let text { out.write(text) } }
            for number in numbers { if let number { out.write(Int64(number)) } }
        }
    }

    private mutating func strings(_ list: [String]) {
        writer.write(UInt64(list.count))
        for text in list { writer.write(text) }
    }

    private func values(_ values: FieldValues, _ kind: DeltaChange.ValuesKind, of table: String, names: inout WrittenNames, into out: inout BinaryWriter) throws {
        out.write(UInt32(values.count))
        guard !values.isEmpty else { return }
        let positions = names.positions(of: values.names, in: kind)
        for slot in positions.indices {
            guard let value = values.value(at: slot) else { continue }
            out.write(positions[slot])
            try Self.value(value, of: table, field: values.names.names[slot], into: &out)
        }
    }

    /// One value: its tag, then its payload (``DeltaFingerprint`` writes values this way too).
    static func value(_ value: Value, of table: String, field: String, into out: inout BinaryWriter) throws {
        switch value {
        case .null:
            out.write(DeltaBinary.Tag.null.rawValue)
        case .integer(let integer):
            out.write(DeltaBinary.Tag.integer.rawValue)
            out.write(integer)
        case .double(let double):
            guard double.isFinite else {
                throw RelataError(.invalidArgument, "\(double) cannot be sent as JSON", table: table, field: field)
            }
            out.write(DeltaBinary.Tag.double.rawValue)
            out.write(double)
        case .decimal(let decimal):
            out.write(DeltaBinary.Tag.decimal.rawValue)
            out.write(decimal.description)
        case .boolean(let bool):
            out.write(DeltaBinary.Tag.boolean.rawValue)
            out.write(bool)
        case .string(let text):
            out.write(DeltaBinary.Tag.string.rawValue)
            out.write(text)
        case .date(let date):
            out.write(DeltaBinary.Tag.date.rawValue)
            out.write(ISO8601.string(from: date))
        case .guid(let uuid):
            out.write(DeltaBinary.Tag.guid.rawValue)
            out.write(rawBytesOf: uuid.uuid)
        case .blob(let data):
            out.write(DeltaBinary.Tag.blob.rawValue)
            out.write(bytes: data)
        }
    }

    static func code(of type: DeltaChange.ChangeType) -> UInt8 {
        switch type {
        case .insert: 0
        case .update: 1
        case .delete: 2
        }
    }

    static func code(of kind: RowEdit.Kind) -> UInt8 {
        switch kind {
        case .insert: 0
        case .update: 1
        case .delete: 2
        }
    }

    static func code(of status: DeltaChange.Status) -> UInt8 {
        switch status {
        case .pending: 0
        case .resolved: 1
        case .failed: 2
        }
    }

    /// The field names of a delta's values, each given a position when first met.
    private struct WrittenNames {
        private(set) var list: [String] = []
        private var positions: [String: UInt32] = [:]
        /// For each kind of value set (a change's old, new and refreshed values, an edit's), the
        /// list of names met last and the position of each of its names: a delta's changes
        /// share their lists of names (as `makeDelta` makes them), so each list is learnt once.
        private var recent: [(names: FieldNames, positions: [UInt32])?] = Array(repeating: nil, count: DeltaChange.ValuesKind.allCases.count)

        /// The position of each of `names`' names.
        mutating func positions(of names: FieldNames, in kind: DeltaChange.ValuesKind) -> [UInt32] {
            if let recent = recent[kind.rawValue], recent.names === names { return recent.positions }
            let learnt = names.names.map { position(of: $0) }
            recent[kind.rawValue] = (names, learnt)
            return learnt
        }

        private mutating func position(of name: String) -> UInt32 {
            if let position = positions[name] { return position }
            let position = UInt32(list.count)
            positions[name] = position
            list.append(name)
            return position
        }
    }
}

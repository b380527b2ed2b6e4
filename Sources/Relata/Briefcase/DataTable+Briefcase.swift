import Foundation

/// A table's bytes in a briefcase: everything needed to bring it back with its
/// pending changes (see ``BriefcaseFormat``). Calculated and lookup fields,
/// indexes, observers and rules are code, not data: add them again after a load.
extension DataTable {
    func writeBriefcase(into writer: inout BinaryWriter) throws {
        writer.reserve(more: slotCount * (fields.count * 9 + 8))
        for byte in BriefcaseFormat.tableMagic { writer.write(byte) }
        writer.write(name)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        writer.write(bytes: try encoder.encode(fields))
        writer.write(nextTemporaryKey)
        writer.write(Int64(nextChangeId))
        writer.write(UInt64(slotCount))
        for column in columns { column.writeBriefcase(into: &writer) }
        writer.write(UInt64(changes.keys.count))
        for (slot, record) in changes {
            writer.write(UInt64(slot))
            writer.write(UInt8(record.state.ordinal))
            writer.write(Int64(record.changeId))
            writer.write(record.failureMessage != nil)
            if let message = record.failureMessage { writer.write(message) }
            Self.write(record.pending, into: &writer)
            writer.write(record.edit != nil)
            if let edit = record.edit { Self.write(edit, into: &writer) }
            writer.write(UInt32(record.history.count))
            for entry in record.history {
                writer.write(entry.sequence)
                writer.write(UInt8(RowEdit.Kind.briefcaseOrder.firstIndex(of: entry.kind) ?? 0))
                Self.write(ValuesByFieldIndex(Dictionary(uniqueKeysWithValues: entry.values.compactMap { name, value in
                    fieldIndex(named: name).map { ($0, value) }
                })), into: &writer)
            }
        }
    }

    private static func write(_ values: ValuesByFieldIndex, into writer: inout BinaryWriter) {
        let entries = Array(values)
        writer.write(UInt32(entries.count))
        for (field, value) in entries {
            writer.write(UInt32(field))
            value.writeBriefcase(into: &writer)
        }
    }

    static func readBriefcase(from reader: inout BinaryReader) throws -> DataTable {
        for byte in BriefcaseFormat.tableMagic where try reader.read(UInt8.self) != byte {
            throw BriefcaseFormat.damaged("\(reader.context): a table does not start where it should")
        }
        let name = try reader.readString()
        reader.context = "table \(name)"
        let fieldJSON = try reader.readBytes()
        let fields: [FieldDefinition]
        do {
            fields = try JSONDecoder().decode([FieldDefinition].self, from: Data(fieldJSON))
        } catch {
            throw BriefcaseFormat.damaged("table \(name): the field definitions do not decode (\(error))")
        }
        let table: DataTable
        do { table = try DataTable(name: name, fields: fields) } catch let error as RelataError {
            throw BriefcaseFormat.damaged("table \(name): the field definitions are not valid (\(error))")
        }
        // Counters are checked against the range the table itself keeps them in: temporary keys
        // count down from -1, change ids up from 0, far from where arithmetic on them could overflow.
        table.nextTemporaryKey = try reader.read(Int64.self)
        guard Self.temporaryKeyRange.contains(table.nextTemporaryKey) else {
            throw BriefcaseFormat.damaged("table \(name): the next temporary key \(table.nextTemporaryKey) is out of range")
        }
        let nextChangeId = try reader.read(Int64.self)
        guard Self.changeIdRange.contains(nextChangeId) else {
            throw BriefcaseFormat.damaged("table \(name): the next change id \(nextChangeId) is out of range")
        }
        table.nextChangeId = Int(nextChangeId)
        let slotCount = try reader.readCount(elementSize: 0, "the row count")
        for (field, column) in zip(fields, table.columns) {
            reader.context = "table \(name), field \(field.name)"
            try column.readBriefcase(from: &reader, count: slotCount, type: field.type)
        }
        reader.context = "table \(name)"
        table.changes.restoreEmptySlots(slotCount)
        table.handles = Array(repeating: nil, count: slotCount)
        let recordCount = try reader.readCount(elementSize: 20, "the change records")
        var seen = Set<Int>()
        for _ in 0..<recordCount {
            let rawSlot = try reader.read(UInt64.self)
            guard let slot = Int(exactly: rawSlot), slot < slotCount, seen.insert(slot).inserted else {
                throw BriefcaseFormat.damaged("table \(name): a change record names row slot \(rawSlot), which is out of range or repeated")
            }
            let ordinal = Int(try reader.read(UInt8.self))
            guard RowState.allCases.indices.contains(ordinal) else {
                throw BriefcaseFormat.damaged("table \(name): \(ordinal) is not a row state")
            }
            guard let state = RowState.allCases.first(where: { Int($0.ordinal) == ordinal }) else {
                throw BriefcaseFormat.damaged("table \(name): \(ordinal) is not a row state")
            }
            var record = RowChanges(state: state)
            let changeId = try reader.read(Int64.self)
            guard Self.changeIdRange.contains(changeId) else {
                throw BriefcaseFormat.damaged("table \(name): change id \(changeId) is out of range")
            }
            record.changeId = Int(changeId)
            table.nextChangeId = max(table.nextChangeId, record.changeId + 1)
            if try reader.readBool() { record.failureMessage = try reader.readString() }
            record.pending = try readValues(from: &reader, fields: fields, table: name)
            if try reader.readBool() { record.edit = try readValues(from: &reader, fields: fields, table: name) }
            if reader.formatVersion >= 2 { record.history = try readEdits(from: &reader, fields: fields, table: name) }
            table.setChanges(record, at: slot)
        }
        // Edits made after the briefcase is opened come after the ones it holds.
        EditSequence.advance(past: table.highestEditSequence)
        return table
    }

    private static func readEdits(from reader: inout BinaryReader, fields: [FieldDefinition], table: String) throws -> [RowEdit] {
        let count = try reader.read(UInt32.self)
        var edits: [RowEdit] = []
        for _ in 0..<count {
            let sequence = try reader.read(Int64.self)
            guard sequence >= 0 else { throw BriefcaseFormat.damaged("table \(table): an edit's sequence is \(sequence)") }
            let kindByte = Int(try reader.read(UInt8.self))
            guard RowEdit.Kind.briefcaseOrder.indices.contains(kindByte) else {
                throw BriefcaseFormat.damaged("table \(table): \(kindByte) is not a kind of edit")
            }
            let values = try readValues(from: &reader, fields: fields, table: table)
            edits.append(RowEdit(sequence: sequence, kind: RowEdit.Kind.briefcaseOrder[kindByte],
                                 values: FieldValues(uniqueKeysWithValues: values.map { (fields[$0.key].name, $0.value) })))
        }
        return edits
    }

    /// Temporary keys a briefcase may hold: -1 down to -2^53 (exact in JavaScript, far from `Int64.min`).
    static let temporaryKeyRange: ClosedRange<Int64> = -(1 << 53)...(-1)
    /// Change ids a briefcase may hold: 0 up to 2^53.
    static let changeIdRange: ClosedRange<Int64> = 0...(1 << 53)

    private static func readValues(from reader: inout BinaryReader, fields: [FieldDefinition], table: String) throws -> ValuesByFieldIndex {
        var values: ValuesByFieldIndex = [:]
        for _ in 0..<(try reader.read(UInt32.self)) {
            let field = Int(try reader.read(UInt32.self))
            guard fields.indices.contains(field) else {
                throw BriefcaseFormat.damaged("table \(table): a change names field \(field + 1), the table has \(fields.count)")
            }
            let value = try Value.readBriefcase(from: &reader)
            do throws(CoercionFailure) {
                values[field] = try fields[field].type.coerced(value)
            } catch {
                throw BriefcaseFormat.damaged("table \(table), field \(fields[field].name): a pending value does not fit (\(error.message))")
            }
        }
        return values
    }
}

extension ChangeStore {
    /// Starts a restored table: `count` slots, none with a record yet.
    mutating func restoreEmptySlots(_ count: Int) {
        precondition(slotCount == 0, "restoring into a table that has rows")
        self = ChangeStore()
        for _ in 0..<count { appendSlot() }
    }
}

extension Column {
    func writeBriefcase(into writer: inout BinaryWriter) {
        func nulls<E>(_ column: TypedColumn<E>) { writer.write(raw: column.nullWords) }
        switch self {
        case .integer(let column):
            nulls(column)
            writer.write(raw: column.elements)
        case .double(let column):
            nulls(column)
            writer.write(raw: column.elements)
        case .boolean(let column):
            nulls(column)
            writer.write(raw: column.elements.map { $0 ? UInt8(1) : 0 })
        case .date(let column):
            nulls(column)
            writer.write(raw: column.elements.map(\.timeIntervalSinceReferenceDate))
        case .decimal(let column):
            nulls(column)
            writer.write(UInt64(column.count))
            for element in column.elements { writer.write(element.description) }
        case .string(let column):
            // All lengths, then all bytes: one block each, read back without a check per string.
            nulls(column)
            var lengths: [UInt32] = []
            lengths.reserveCapacity(column.count)
            var utf8: [UInt8] = []
            for var element in column.elements {
                element.withUTF8 { bytes in
                    lengths.append(UInt32(bytes.count))
                    utf8.append(contentsOf: bytes)
                }
            }
            writer.write(raw: lengths)
            writer.write(bytes: utf8)
        case .guid(let column):
            nulls(column)
            writer.write(UInt64(column.count))
            for element in column.elements { writer.write(rawBytesOf: element.uuid) }
        case .blob(let column):
            nulls(column)
            writer.write(UInt64(column.count))
            for element in column.elements { writer.write(bytes: element) }
        }
    }

    /// Reads the values of a column of `type`, checking each against the type's range.
    func readBriefcase(from reader: inout BinaryReader, count: Int, type: DataType) throws {
        let nullWords = try reader.read(raw: UInt64.self, "the NULL bitmap")
        guard nullWords.count == (count + 63) / 64 else {
            throw BriefcaseFormat.damaged("\(reader.context): the NULL bitmap has \(nullWords.count) words for \(count) rows")
        }
        func elements<E: BitwiseCopyable>(_: E.Type) throws -> [E] {
            let values = try reader.read(raw: E.self, "the values")
            guard values.count == count else {
                throw BriefcaseFormat.damaged("\(reader.context): \(values.count) values for \(count) rows")
            }
            return values
        }
        func decoded<E>(_ decode: (inout BinaryReader) throws -> E) throws -> [E] {
            guard try reader.read(UInt64.self) == UInt64(count) else {
                throw BriefcaseFormat.damaged("\(reader.context): the number of values does not match the \(count) rows")
            }
            var values: [E] = []
            values.reserveCapacity(count)
            for _ in 0..<count { values.append(try decode(&reader)) }
            return values
        }
        switch self {
        case .integer(let column):
            let values = try elements(Int64.self)
            if let range = type.integerRange, let outside = values.first(where: { !range.contains($0) }) {
                throw BriefcaseFormat.damaged("\(reader.context): \(outside) is out of range for \(type.rawValue)")
            }
            column.restore(elements: values, nullWords: nullWords)
        case .double(let column): column.restore(elements: try elements(Double.self), nullWords: nullWords)
        case .boolean(let column):
            let bytes = try elements(UInt8.self)
            guard bytes.allSatisfy({ $0 <= 1 }) else { throw BriefcaseFormat.damaged("\(reader.context): a boolean is neither 0 nor 1") }
            column.restore(elements: bytes.map { $0 == 1 }, nullWords: nullWords)
        case .date(let column):
            let seconds = try elements(Double.self)
            guard seconds.allSatisfy(\.isFinite) else { throw BriefcaseFormat.damaged("\(reader.context): a date is not a finite time") }
            column.restore(elements: seconds.map { Date(timeIntervalSinceReferenceDate: $0).roundedToMicroseconds }, nullWords: nullWords)
        case .decimal(let column):
            column.restore(elements: try decoded { reader in
                let text = try reader.readString()
                guard let decimal = Decimal(string: text, locale: .posix) else {
                    throw BriefcaseFormat.damaged("\(reader.context): '\(text)' is not a decimal")
                }
                return decimal
            }, nullWords: nullWords)
        case .string(let column):
            let lengths = try elements(UInt32.self)
            let block = try reader.readBytes().bindMemory(to: UInt8.self)
            guard lengths.reduce(0, { $0 + Int($1) }) == block.count else {
                throw BriefcaseFormat.damaged("\(reader.context): the string lengths do not add up to the text block")
            }
            let ascii = block.allSatisfy { $0 < 0x80 }
            var strings: [String] = []
            strings.reserveCapacity(count)
            var start = 0
            for length in lengths {
                let slice = UnsafeBufferPointer(rebasing: block[start..<start + Int(length)])
                start += Int(length)
                guard ascii || String.isValidUTF8(slice) else {
                    throw BriefcaseFormat.damaged("\(reader.context): a string is not valid UTF-8")
                }
                strings.append(String(unsafeUninitializedCapacity: slice.count) { buffer in
                    _ = buffer.initialize(fromContentsOf: slice)
                    return slice.count
                })
            }
            column.restore(elements: strings, nullWords: nullWords)
        case .guid(let column):
            column.restore(elements: try decoded { try $0.readUUID() }, nullWords: nullWords)
        case .blob(let column): column.restore(elements: try decoded { Data(try $0.readBytes()) }, nullWords: nullWords)
        }
    }
}

extension Value {
    private enum Tag: UInt8 {
        case null, integer, double, decimal, boolean, string, date, guid, blob
    }

    func writeBriefcase(into writer: inout BinaryWriter) {
        switch self {
        case .null: writer.write(Tag.null.rawValue)
        case .integer(let value): writer.write(Tag.integer.rawValue); writer.write(value)
        case .double(let value): writer.write(Tag.double.rawValue); writer.write(value)
        case .decimal(let value): writer.write(Tag.decimal.rawValue); writer.write(value.description)
        case .boolean(let value): writer.write(Tag.boolean.rawValue); writer.write(value)
        case .string(let value): writer.write(Tag.string.rawValue); writer.write(value)
        case .date(let value): writer.write(Tag.date.rawValue); writer.write(value.timeIntervalSinceReferenceDate)
        case .guid(let value):
            writer.write(Tag.guid.rawValue)
            writer.write(rawBytesOf: value.uuid)
        case .blob(let value): writer.write(Tag.blob.rawValue); writer.write(bytes: value)
        }
    }

    static func readBriefcase(from reader: inout BinaryReader) throws -> Value {
        let byte = try reader.read(UInt8.self)
        guard let tag = Tag(rawValue: byte) else { throw BriefcaseFormat.damaged("\(reader.context): \(byte) is not a value tag") }
        switch tag {
        case .null: return .null
        case .integer: return .integer(try reader.read(Int64.self))
        case .double: return .double(try reader.readDouble())
        case .decimal:
            let text = try reader.readString()
            guard let decimal = Decimal(string: text, locale: .posix) else {
                throw BriefcaseFormat.damaged("\(reader.context): '\(text)' is not a decimal")
            }
            return .decimal(decimal)
        case .boolean: return .boolean(try reader.readBool())
        case .string: return .string(try reader.readString())
        case .date:
            let seconds = try reader.readDouble()
            guard seconds.isFinite else { throw BriefcaseFormat.damaged("\(reader.context): a date is not a finite time") }
            return .date(Date(timeIntervalSinceReferenceDate: seconds).roundedToMicroseconds)
        case .guid:
            return .guid(try reader.readUUID())
        case .blob: return .blob(Data(try reader.readBytes()))
        }
    }
}

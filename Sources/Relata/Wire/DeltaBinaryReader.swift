import Foundation

/// Reads ``DeltaBinary``'s form, checking every count, length, position and tag against the
/// data before it is used: hostile bytes get an error that says where, never a trap or an
/// allocation larger than the data.
enum DeltaBinaryReader {
    static func request(_ bytes: UnsafeRawBufferPointer) throws -> (apply: ApplyId?, deltas: [Delta]) {
        var reader = BinaryReader(bytes, context: "the binary delta")
        do {
            let magic = DeltaBinary.magic
            guard bytes.count >= magic.count, bytes.prefix(magic.count).elementsEqual(magic) else {
                throw problem("it does not start with \"RELATADL\"")
            }
            try reader.skip(magic.count)
            let version = try reader.read(UInt32.self)
            guard version == DeltaBinary.version else {
                throw problem("version \(version) is not one this reader knows (\(DeltaBinary.version))")
            }
            var apply: ApplyId?
            if try reader.readBool() {
                let id = try reader.readString(), madeAt = try reader.read(Int64.self)
                do {
                    apply = try ApplyId(id: id, madeAt: madeAt)
                } catch let error as RelataError {
                    throw problem("apply: \(error.message)")
                }
            }
            let count = try reader.readCount("the deltas")
            var deltas: [Delta] = []
            deltas.reserveCapacity(count)
            for index in 0..<count {
                reader.context = "the binary delta, deltas[\(index)]"
                deltas.append(try delta(&reader))
            }
            guard reader.remaining == 0 else {
                throw problem("\(reader.remaining) bytes follow the last delta")
            }
            return (apply, deltas)
        } catch let error as RelataError where error.code != .invalidDelta {
            throw RelataError(.invalidDelta, error.message)   // the byte reader's own words, as a bad delta
        }
    }

    private static func delta(_ reader: inout BinaryReader) throws -> Delta {
        let context = reader.context
        let tableName = try reader.readString()
        let keyFields = try strings(&reader, "keyFields")
        let loggedFields = try strings(&reader, "loggedFields")
        let names = try strings(&reader, "the field names")
        // A change takes at least 16 bytes (id, type, status, parts, three value counts).
        let count = try reader.readCount(elementSize: 16, "changes")
        var changes: [DeltaChange] = []
        changes.reserveCapacity(count)
        reader.context = context
        var shapes = ValueShapes()
        for index in 0..<count {
            reader.element = (".changes", index)
            changes.append(try change(&reader, names: names, shapes: &shapes))
        }
        return Delta(tableName: tableName, keyFields: keyFields, loggedFields: loggedFields, changes: changes)
    }

    private static func change(_ reader: inout BinaryReader, names: [String], shapes: inout ValueShapes) throws -> DeltaChange {
        let changeId = Int(try reader.read(Int64.self))
        let type = try changeType(&reader, "type")
        let status: DeltaChange.Status
        switch try reader.read(UInt8.self) {
        case 0: status = .pending
        case 1: status = .resolved
        case 2: status = .failed
        case let other: throw problem("\(reader.context).status: \(other) is not pending (0), resolved (1) or failed (2)")
        }
        let parts = try reader.read(UInt8.self)
        guard parts & ~(DeltaBinary.Parts.edits | DeltaBinary.Parts.message | DeltaBinary.Parts.failure) == 0 else {
            throw problem("\(reader.context): parts \(parts) has bits this version does not know")
        }
        let oldValues = try values(&reader, names: names, .old, shapes: &shapes, "oldValues")
        let newValues = try values(&reader, names: names, .new, shapes: &shapes, "newValues")
        let refreshedValues = try values(&reader, names: names, .refreshed, shapes: &shapes, "refreshedValues")
        var edits: [RowEdit]?
        if parts & DeltaBinary.Parts.edits != 0 {
            let count = try reader.readCount(elementSize: 13, "edits")   // sequence, kind, a value count
            var list: [RowEdit] = []
            list.reserveCapacity(count)
            for index in 0..<count {
                let sequence = try reader.read(Int64.self)
                guard sequence > 0 else { throw problem("\(reader.context).edits[\(index)]: an edit's sequence is a positive number, not \(sequence)") }
                let kind: RowEdit.Kind = switch try changeType(&reader, "edits[\(index)].kind") {
                case .insert: .insert
                case .update: .update
                case .delete: .delete
                }
                let values = try values(&reader, names: names, .edit, shapes: &shapes, "edits[\(index)].values")
                list.append(RowEdit(sequence: sequence, kind: kind, values: values))
            }
            edits = list
        }
        let message = parts & DeltaBinary.Parts.message != 0 ? try reader.readString() : nil
        let failure = parts & DeltaBinary.Parts.failure != 0 ? try changeFailure(&reader) : nil
        return DeltaChange(changeId: changeId, type: type, oldValues: oldValues, newValues: newValues, status: status,
                           message: message, failure: failure, refreshedValues: refreshedValues, edits: edits)
    }

    private static func changeType(_ reader: inout BinaryReader, _ what: @autoclosure () -> String) throws -> DeltaChange.ChangeType {
        switch try reader.read(UInt8.self) {
        case 0: .insert
        case 1: .update
        case 2: .delete
        case let other: throw problem("\(reader.context).\(what()): \(other) is not insert (0), update (1) or delete (2)")
        }
    }

    private static func changeFailure(_ reader: inout BinaryReader) throws -> ChangeFailure {
        let kindText = try reader.readString()
        guard let kind = FailureKind(rawValue: kindText) else {
            throw problem("\(reader.context).failure.kind: '\(kindText)' is not a failure kind (\(FailureKind.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        let message = try reader.readString()
        let present = try reader.read(UInt8.self)
        guard present & ~0b11_1111 == 0 else { throw problem("\(reader.context).failure: \(present) names parts this version does not know") }
        var texts: [String?] = []
        for bit in 0..<4 { texts.append(present & (1 << bit) != 0 ? try reader.readString() : nil) }
        var numbers: [Int?] = []
        for bit in 4..<6 { numbers.append(present & (1 << bit) != 0 ? Int(try reader.read(Int64.self)) : nil) }
        return ChangeFailure(kind, message, event: texts[0], table: texts[1], row: texts[2], file: texts[3],
                             line: numbers[0], column: numbers[1])
    }

    private static func strings(_ reader: inout BinaryReader, _ what: String) throws -> [String] {
        let count = try reader.readCount(elementSize: 4, what)   // a length each, at least
        var list: [String] = []
        list.reserveCapacity(count)
        for _ in 0..<count { list.append(try reader.readString()) }
        return list
    }

    /// Field values: the last of two with one name counts, as in the JSON. A delta's changes
    /// name the same fields, so their sets share one list of names (``FieldValuesBuilder``).
    private static func values(_ reader: inout BinaryReader, names: [String], _ kind: DeltaChange.ValuesKind, shapes: inout ValueShapes,
                               _ what: @autoclosure () -> String) throws -> FieldValues {
        let count = Int(try reader.read(UInt32.self))
        guard count <= reader.remaining / 5 else {   // a name and a tag each, at least
            throw problem("\(reader.context).\(what()) claims \(count) values, more than the data holds")
        }
        guard count > 0 else { return FieldValues() }
        shapes.names.removeAll(keepingCapacity: true)
        var values: [Value?] = []
        values.reserveCapacity(count)
        for _ in 0..<count {
            let position = Int(try reader.read(UInt32.self))
            guard position < names.count else {
                throw problem("\(reader.context).\(what()): field name \(position) is not among the delta's \(names.count)")
            }
            do {
                values.append(try value(&reader))
            } catch let failure as ValueProblem {
                throw problem("\(reader.context).\(what()).\(names[position]): \(failure.message)")
            }
            shapes.names.append(names[position])
        }
        return shapes.builder.make(kind, names: shapes.names, values: values)
    }

    private struct ValueProblem: Error {
        let message: String
    }

    private static func value(_ reader: inout BinaryReader) throws -> Value {
        let code = try reader.read(UInt8.self)
        guard let tag = DeltaBinary.Tag(rawValue: code) else { throw ValueProblem(message: "\(code) is not a value tag (0…8)") }
        switch tag {
        case .null: return .null
        case .integer: return .integer(try reader.read(Int64.self))
        case .double:
            let double = try reader.readDouble()
            guard double.isFinite else { throw ValueProblem(message: "expected a finite number") }
            return .double(double)
        case .boolean: return .boolean(try reader.readBool())
        case .string: return .string(try reader.readString())
        case .guid: return .guid(try reader.readUUID())
        case .blob: return .blob(Data(try reader.readBytes()))
        case .decimal, .date:
            let text = try reader.readString()
            do throws(CoercionFailure) {
                return try (tag == .decimal ? DataType.decimal : DataType.dateTime).parse(text)
            } catch {
                throw ValueProblem(message: error.message)
            }
        }
    }

    private static func problem(_ message: String) -> RelataError {
        RelataError(.invalidDelta, "the binary delta is not valid: \(message)")
    }
}

/// What reading a delta's value sets keeps from one to the next: the builder sharing their
/// names, and the names of the set being read.
private struct ValueShapes {
    var builder = FieldValuesBuilder()
    var names: [String] = []
}

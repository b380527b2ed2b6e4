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
        var writer = JSONWriter(capacity: 256 * deltas.reduce(0) { $0 + $1.changes.count } + 64)
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
            let reader = Reader(try JSONTree.parse(bytes), path: .root)
            return (try reader.optionalMember("apply").map(applyId), try reader.member("deltas").array(delta))
        } catch let failure as JSONTree.Failure {
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
                try values(change.oldValues, of: delta.tableName, into: &writer)
                writer.raw(#","newValues":"#)
                try values(change.newValues, of: delta.tableName, into: &writer)
            }
            writer.raw(#","refreshedValues":"#)
            try values(change.refreshedValues, of: delta.tableName, into: &writer)
            if !minimal, let edits = change.edits {
                writer.raw(#","edits":["#)
                for (index, edit) in edits.enumerated() {
                    if index > 0 { writer.raw(",") }
                    writer.raw(#"{"sequence":\#(edit.sequence),"kind":"#)
                    writer.string(edit.kind.rawValue)
                    writer.raw(#","values":"#)
                    try values(edit.values, of: delta.tableName, into: &writer)
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

    private static func values(_ values: [String: Value], of table: String, into writer: inout JSONWriter) throws {
        writer.raw("{")
        for (index, (field, value)) in values.sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { writer.raw(",") }
            writer.string(field)
            writer.raw(":")
            switch value {
            case .null: writer.raw("null")
            case .integer(let integer): writer.raw(#"{"integer":\#(integer)}"#)
            case .double(let double):
                guard double.isFinite else {
                    throw RelataError(.invalidArgument, "\(double) cannot be sent as JSON", table: table, field: field)
                }
                writer.raw(#"{"double":\#(double)}"#)
            case .decimal(let decimal):
                writer.raw(#"{"decimal":"#)
                writer.string(decimal.description)
                writer.raw("}")
            case .boolean(let bool): writer.raw(bool ? #"{"boolean":true}"# : #"{"boolean":false}"#)
            case .string(let text):
                writer.raw(#"{"string":"#)
                writer.string(text)
                writer.raw("}")
            case .date(let date):
                writer.raw(#"{"date":"#)
                writer.string(ISO8601.string(from: date))
                writer.raw("}")
            case .guid(let uuid):
                writer.raw(#"{"guid":"#)
                writer.string(uuid.uuidString)
                writer.raw("}")
            case .blob(let data):
                writer.raw(#"{"blob":"#)
                writer.string(data.base64EncodedString())
                writer.raw("}")
            }
        }
        writer.raw("}")
    }

    // MARK: Reading

    private static func applyId(_ reader: Reader) throws -> ApplyId {
        let id = try reader.member("id").string(), madeAt = try reader.member("madeAt").int64()
        do {
            return try ApplyId(id: id, madeAt: madeAt)
        } catch let error as RelataError {
            throw reader.failure(error.message)
        }
    }

    private static func delta(_ reader: Reader) throws -> Delta {
        Delta(tableName: try reader.member("tableName").string(),
              keyFields: try reader.member("keyFields").array { try $0.string() },
              loggedFields: try reader.member("loggedFields").array { try $0.string() },
              changes: try reader.member("changes").array { try change($0) })
    }

    private static func change(_ reader: Reader) throws -> DeltaChange {
        let type = try reader.member("type").choice(of: DeltaChange.ChangeType.self)
        let status = try reader.member("status").choice(of: DeltaChange.Status.self)
        return DeltaChange(changeId: try reader.member("changeId").integer(), type: type,
                           oldValues: try values(reader.member("oldValues")), newValues: try values(reader.member("newValues")),
                           status: status, message: try reader.optionalMember("message")?.string(),
                           failure: try reader.optionalMember("failure").map(failure),
                           refreshedValues: try values(reader.member("refreshedValues")),
                           edits: try reader.optionalMember("edits")?.array(edit))
    }

    private static func edit(_ reader: Reader) throws -> RowEdit {
        let kind = try reader.member("kind").choice(of: RowEdit.Kind.self)
        let sequenceReader = try reader.member("sequence")
        let sequence = try sequenceReader.integer()
        guard sequence > 0 else { throw sequenceReader.failure("an edit's sequence is a positive number, not \(sequence)") }
        return RowEdit(sequence: Int64(sequence), kind: kind, values: try reader.optionalMember("values").map(values) ?? [:])
    }

    private static func failure(_ reader: Reader) throws -> ChangeFailure {
        let kindReader = try reader.member("kind")
        let kindText = try kindReader.string()
        guard let kind = FailureKind(rawValue: kindText) else {
            throw kindReader.failure("'\(kindText)' is not a failure kind (\(FailureKind.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        return ChangeFailure(kind, try reader.member("message").string(), event: try reader.optionalMember("event")?.string(),
                             table: try reader.optionalMember("table")?.string(), row: try reader.optionalMember("row")?.string(),
                             file: try reader.optionalMember("file")?.string(), line: try reader.optionalMember("line")?.integer(),
                             column: try reader.optionalMember("column")?.integer())
    }

    private static func values(_ reader: Reader) throws -> [String: Value] {
        guard case .object(let members) = reader.tree else { throw reader.failure("expected an object of field values") }
        var values: [String: Value] = [:]
        values.reserveCapacity(members.count)
        for (field, tree) in members {
            values[field] = try value(Reader(tree, path: .member(reader.path, field)))
        }
        return values
    }

    /// A value in the tagged form: `null`, or an object with exactly one of the type keys.
    private static func value(_ reader: Reader) throws -> Value {
        if case .null = reader.tree { return .null }
        guard case .object(let members) = reader.tree, members.count == 1, let (tag, tree) = members.first else {
            throw reader.failure("a value is null or an object with exactly one of the keys integer, double, decimal, boolean, string, date, guid, blob")
        }
        let inner = Reader(tree, path: .member(reader.path, tag))
        switch tag {
        case "integer": return .integer(try inner.int64())
        case "double":
            guard case .number(let text) = tree, let double = Double(text), double.isFinite else { throw inner.failure("expected a finite number") }
            return .double(double)
        case "boolean":
            guard case .bool(let bool) = tree else { throw inner.failure("expected true or false") }
            return .boolean(bool)
        case "string": return .string(try inner.string())
        case "guid":
            let text = try inner.string()
            guard let uuid = UUID(uuidString: text) else { throw inner.failure("'\(text)' is not a GUID") }
            return .guid(uuid)
        case "date":
            if case .number(let text) = tree {
                guard let seconds = Double(text), seconds.isFinite else { throw inner.failure("'\(text)' is not a time") }
                return .date(Date(timeIntervalSince1970: seconds).roundedToMicroseconds)
            }
            fallthrough
        case "decimal", "blob":
            let text = try inner.string()
            let type: DataType = tag == "decimal" ? .decimal : tag == "date" ? .dateTime : .blob
            do throws(CoercionFailure) {
                return try type.parse(text)
            } catch {
                throw inner.failure(error.message)
            }
        default:
            throw reader.failure("'\(tag)' is not a value type (integer, double, decimal, boolean, string, date, guid, blob)")
        }
    }

    /// Where a node is in the document (`deltas[0].changes[3].type`), kept as links to its
    /// parent and written out only for an error: most nodes are read without one.
    private indirect enum Path {
        case root
        case member(Path, String)
        case element(Path, Int)

        var text: String {
            switch self {
            case .root: return ""
            case .member(.root, let key): return key
            case .member(let parent, let key): return parent.text + "." + key
            case .element(let parent, let index): return parent.text + "[\(index)]"
            }
        }
    }

    /// A node of the document and where it is, for errors that say where.
    private struct Reader {
        let tree: JSONTree
        let path: Path

        init(_ tree: JSONTree, path: Path) {
            self.tree = tree
            self.path = path
        }

        func failure(_ what: String) -> JSONTree.Failure {
            let text = path.text
            return JSONTree.Failure("\(text.isEmpty ? "the body" : text): \(what)")
        }

        func optionalMember(_ key: String) throws -> Reader? {
            guard case .object(let members) = tree else { throw failure("expected an object") }
            guard let found = members.first(where: { $0.key == key }), found.value != .null else { return nil }
            return Reader(found.value, path: .member(path, key))
        }

        /// The value as one of an enumeration's raw values (`'upsert' is not insert, update or delete`).
        func choice<Choice: RawRepresentable & CaseIterable>(of: Choice.Type) throws -> Choice where Choice.RawValue == String {
            let text = try string()
            guard let choice = Choice(rawValue: text) else {
                let names = Choice.allCases.map(\.rawValue)
                throw failure("'\(text)' is not \(names.dropLast().joined(separator: ", ")) or \(names.last ?? "")")
            }
            return choice
        }

        func member(_ key: String) throws -> Reader {
            guard let found = try optionalMember(key) else { throw failure("'\(key)' is missing") }
            return found
        }

        func array<Element>(_ element: (Reader) throws -> Element) throws -> [Element] {
            guard case .array(let elements) = tree else { throw failure("expected an array") }
            var result: [Element] = []
            result.reserveCapacity(elements.count)
            for (index, tree) in elements.enumerated() {
                result.append(try element(Reader(tree, path: .element(path, index))))
            }
            return result
        }

        func string() throws -> String {
            guard case .string(let text) = tree else { throw failure("expected a string") }
            return text
        }

        func int64() throws -> Int64 {
            guard case .number(let text) = tree else { throw failure("expected a whole number") }
            if let integer = Int64(text) { return integer }
            // 7.0 or 7e2 are whole numbers too, when they are exactly so.
            guard let double = Double(text), double.rounded() == double, double >= -9.223372036854775808e18, double < 9.223372036854775808e18 else {
                throw failure("\(text) is not a whole number that fits 64 bits")
            }
            return Int64(double)
        }

        func integer() throws -> Int {
            Int(try int64())
        }
    }
}

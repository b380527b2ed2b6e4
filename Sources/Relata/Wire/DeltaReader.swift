import Foundation

/// Reads UpdateData's JSON (``DeltaJSON``) from its bytes in one pass, checking the syntax as
/// it goes and building only the deltas.
///
/// The answer does not depend on where problems lie: a syntax error anywhere is the one
/// reported (with its byte offset); otherwise an object's members are judged in a fixed order
/// once all are read, arrays element by element, so a document with several problems always
/// reports the same one. The first of two members with one name counts, and a member whose
/// value is `null` is absent — except in field values (`oldValues` and its siblings), where
/// the last of two equal names counts, as for a dictionary built member by member.
enum DeltaReader {
    /// Reads an UpdateData request: its apply id when it has one, and its deltas.
    ///
    /// - Throws: ``JSONScanner/Failure`` saying where and what.
    static func request(_ bytes: UnsafeBufferPointer<UInt8>) throws -> (apply: ApplyId?, deltas: [Delta]) {
        try JSONScanner.message(bytes) { try $0.request() }
    }
}

// MARK: - The protocol's objects

extension JSONScanner {
    fileprivate mutating func request() throws -> (apply: ApplyId?, deltas: [Delta]) {
        skipSpace()
        guard current == UInt8(ascii: "{") else { throw JSONProblem("expected an object") }
        var apply = JSONSlot<ApplyId>("apply"), deltas = JSONSlot<[Delta]>("deltas")
        try object(depth: 0) { scanner, key in
            if try scanner.key(key, is: "apply") {
                try apply.fill(&scanner, depth: 1) { try $0.applyId(depth: 1) }
            } else if try scanner.key(key, is: "deltas") {
                try deltas.fill(&scanner, depth: 1) { try $0.list(depth: 1) { try $0.delta(depth: 2) } }
            } else {
                try scanner.validateValue(depth: 1)
            }
        }
        return (try apply.optional(), try deltas.required())
    }

    private mutating func applyId(depth: Int) throws -> ApplyId {
        skipSpace()
        guard current == UInt8(ascii: "{") else { throw JSONProblem("expected an object") }
        var id = JSONSlot<String>("id"), madeAt = JSONSlot<Int64>("madeAt")
        try object(depth: depth) { scanner, key in
            if try scanner.key(key, is: "id") {
                try id.fill(&scanner, depth: depth + 1) { try $0.protocolString() }
            } else if try scanner.key(key, is: "madeAt") {
                try madeAt.fill(&scanner, depth: depth + 1) { try $0.int64() }
            } else {
                try scanner.validateValue(depth: depth + 1)
            }
        }
        let (idText, madeAtSeconds) = (try id.required(), try madeAt.required())
        do {
            return try ApplyId(id: idText, madeAt: madeAtSeconds)
        } catch let error as RelataError {
            throw JSONProblem(error.message)
        }
    }

    private mutating func delta(depth: Int) throws -> Delta {
        skipSpace()
        guard current == UInt8(ascii: "{") else { throw JSONProblem("expected an object") }
        var tableName = JSONSlot<String>("tableName"), keyFields = JSONSlot<[String]>("keyFields")
        var loggedFields = JSONSlot<[String]>("loggedFields"), changes = JSONSlot<[DeltaChange]>("changes")
        var builder = FieldValuesBuilder()
        try object(depth: depth) { scanner, key in
            let inner = depth + 1
            if try scanner.key(key, is: "tableName") {
                try tableName.fill(&scanner, depth: inner) { try $0.protocolString() }
            } else if try scanner.key(key, is: "keyFields") {
                try keyFields.fill(&scanner, depth: inner) { try $0.list(depth: inner) { try $0.protocolString() } }
            } else if try scanner.key(key, is: "loggedFields") {
                try loggedFields.fill(&scanner, depth: inner) { try $0.list(depth: inner) { try $0.protocolString() } }
            } else if try scanner.key(key, is: "changes") {
                try changes.fill(&scanner, depth: inner) { try $0.list(depth: inner) { try $0.change(depth: inner + 1, builder: &builder) } }
            } else {
                try scanner.validateValue(depth: inner)
            }
        }
        return Delta(tableName: try tableName.required(), keyFields: try keyFields.required(),
                     loggedFields: try loggedFields.required(), changes: try changes.required())
    }

    /// A change; `builder` makes its values, sharing names with the changes before it.
    private mutating func change(depth: Int, builder: inout FieldValuesBuilder) throws -> DeltaChange {
        skipSpace()
        guard current == UInt8(ascii: "{") else { throw JSONProblem("expected an object") }
        var changeId = JSONSlot<Int>("changeId"), type = JSONSlot<DeltaChange.ChangeType>("type"), status = JSONSlot<DeltaChange.Status>("status")
        var oldValues = JSONSlot<FieldValues>("oldValues"), newValues = JSONSlot<FieldValues>("newValues")
        var refreshedValues = JSONSlot<FieldValues>("refreshedValues"), message = JSONSlot<String>("message")
        var failure = JSONSlot<ChangeFailure>("failure"), edits = JSONSlot<[RowEdit]>("edits")
        try object(depth: depth) { scanner, key in
            let inner = depth + 1
            if try scanner.key(key, is: "changeId") {
                try changeId.fill(&scanner, depth: inner) { try $0.integer() }
            } else if try scanner.key(key, is: "type") {
                try type.fill(&scanner, depth: inner) { try $0.choice() }
            } else if try scanner.key(key, is: "status") {
                try status.fill(&scanner, depth: inner) { try $0.choice() }
            } else if try scanner.key(key, is: "oldValues") {
                try oldValues.fill(&scanner, depth: inner) { try $0.fieldValues(depth: inner, .old, builder: &builder) }
            } else if try scanner.key(key, is: "newValues") {
                try newValues.fill(&scanner, depth: inner) { try $0.fieldValues(depth: inner, .new, builder: &builder) }
            } else if try scanner.key(key, is: "refreshedValues") {
                try refreshedValues.fill(&scanner, depth: inner) { try $0.fieldValues(depth: inner, .refreshed, builder: &builder) }
            } else if try scanner.key(key, is: "message") {
                try message.fill(&scanner, depth: inner) { try $0.protocolString() }
            } else if try scanner.key(key, is: "failure") {
                try failure.fill(&scanner, depth: inner) { try $0.changeFailure(depth: inner) }
            } else if try scanner.key(key, is: "edits") {
                try edits.fill(&scanner, depth: inner) { try $0.list(depth: inner) { try $0.edit(depth: inner + 1, builder: &builder) } }
            } else {
                try scanner.validateValue(depth: inner)
            }
        }
        let (changeType, changeStatus, id) = (try type.required(), try status.required(), try changeId.required())
        let (old, new) = (try oldValues.required(), try newValues.required())
        return DeltaChange(changeId: id, type: changeType, oldValues: old, newValues: new, status: changeStatus,
                           message: try message.optional(), failure: try failure.optional(),
                           refreshedValues: try refreshedValues.required(), edits: try edits.optional())
    }

    private mutating func edit(depth: Int, builder: inout FieldValuesBuilder) throws -> RowEdit {
        skipSpace()
        guard current == UInt8(ascii: "{") else { throw JSONProblem("expected an object") }
        var kind = JSONSlot<RowEdit.Kind>("kind"), sequence = JSONSlot<Int>("sequence"), values = JSONSlot<FieldValues>("values")
        try object(depth: depth) { scanner, key in
            if try scanner.key(key, is: "kind") {
                try kind.fill(&scanner, depth: depth + 1) { try $0.choice() }
            } else if try scanner.key(key, is: "sequence") {
                try sequence.fill(&scanner, depth: depth + 1) { scanner in
                    let sequence = try scanner.integer()
                    guard sequence > 0 else { throw JSONProblem("an edit's sequence is a positive number, not \(sequence)") }
                    return sequence
                }
            } else if try scanner.key(key, is: "values") {
                try values.fill(&scanner, depth: depth + 1) { try $0.fieldValues(depth: depth + 1, .edit, builder: &builder) }
            } else {
                try scanner.validateValue(depth: depth + 1)
            }
        }
        let editKind = try kind.required()
        return RowEdit(sequence: Int64(try sequence.required()), kind: editKind, values: try values.optional() ?? [:])
    }

    private mutating func changeFailure(depth: Int) throws -> ChangeFailure {
        skipSpace()
        guard current == UInt8(ascii: "{") else { throw JSONProblem("expected an object") }
        var kind = JSONSlot<FailureKind>("kind"), message = JSONSlot<String>("message")
        var texts = [JSONSlot<String>("event"), JSONSlot<String>("table"), JSONSlot<String>("row"), JSONSlot<String>("file")]
        var numbers = [JSONSlot<Int>("line"), JSONSlot<Int>("column")]
        try object(depth: depth) { scanner, key in
            let inner = depth + 1
            if try scanner.key(key, is: "kind") {
                try kind.fill(&scanner, depth: inner) { scanner in
                    let text = try scanner.protocolString()
                    guard let kind = FailureKind(rawValue: text) else {
                        throw JSONProblem("'\(text)' is not a failure kind (\(FailureKind.allCases.map(\.rawValue).joined(separator: ", ")))")
                    }
                    return kind
                }
            } else if try scanner.key(key, is: "message") {
                try message.fill(&scanner, depth: inner) { try $0.protocolString() }
            } else if let index = try texts.firstIndex(where: { try scanner.key(key, is: $0.name) }) {
                try texts[index].fill(&scanner, depth: inner) { try $0.protocolString() }
            } else if let index = try numbers.firstIndex(where: { try scanner.key(key, is: $0.name) }) {
                try numbers[index].fill(&scanner, depth: inner) { try $0.integer() }
            } else {
                try scanner.validateValue(depth: inner)
            }
        }
        let failureKind = try kind.required()
        return ChangeFailure(failureKind, try message.required(), event: try texts[0].optional(), table: try texts[1].optional(),
                             row: try texts[2].optional(), file: try texts[3].optional(),
                             line: try numbers[0].optional(), column: try numbers[1].optional())
    }
}

import Foundation
import Relata
import RelataServer

// The fuzz target's service and its check, in a file of their own: `UpdateDataCorpusTests` (a
// link to this file in Tests/RelataServerTests) runs the same check over the committed corpus.

/// A data service over SQLite in memory with row and delta rules, and the check every request
/// must pass. Its tables keep what earlier requests stored (the check compares each apply with
/// the rows just before it).
final class UpdateDataHarness: Sendable {
    let service: DataService

    static let clientFields = [
        FieldDefinition("ClientId", .integer, primaryKey: true),
        FieldDefinition("Name", .string, size: 20, required: true),
        FieldDefinition("Credit", .integer),
    ]
    static let orderFields = [
        FieldDefinition("OrderId", .autoInc, primaryKey: true),
        FieldDefinition("ClientId", .integer, required: true),
        FieldDefinition("Amount", .integer),
    ]

    /// - Throws: when the service cannot start (a fuzz run or a test cannot go on without it).
    init() throws {
        do {
            let schema = try SchemaDefinition(name: "Fuzz", tables: [
                TableDefinition(name: "Clients", fields: Self.clientFields, script: RuleScript("""
                    function beforePost(row) {
                        if (row.Name === 'refuse') fail('no clients named refuse');
                        if (row.Credit !== null && row.Credit > 1000) row.Credit = 1000;
                    }
                    function beforeDelete(row) { if (row.Credit === 7) fail('client 7 stays'); }
                    """, fileName: "Clients.js")),
                TableDefinition(name: "Orders", fields: Self.orderFields, script: RuleScript("""
                    function beforePost(row) {
                        if (row.Amount !== null && row.Amount < 0) fail('a negative amount');
                        const client = lda.select('Clients', row.ClientId);
                        if (client !== null && client.Credit !== null && row.Amount > client.Credit) fail('above the credit');
                    }
                    function beforeProcessDeltaChange(delta, change) { if (change.isUpdate && change.Amount === 13) fail('unlucky'); }
                    """, fileName: "Orders.js"),
                                foreignKeys: [ForeignKeyDefinition(field: "ClientId", references: "Clients", referencedField: "ClientId")]),
            ], updateOrder: ["Clients", "Orders"])
            let storage = try SQLStorage(path: ":memory:", schema: schema)
            let clients = try DataTable(name: "Clients", fields: Self.clientFields, csv: "ClientId,Name,Credit\n1,Acme,500\n2,Globex,50\n7,Kept,7\n")
            let orders = try DataTable(name: "Orders", fields: Self.orderFields, csv: "OrderId,ClientId,Amount\n1,1,10\n2,2,20\n")
            try storage.seedIfEmpty(with: [clients, orders])
            service = try DataService(storage: storage, runtimes: 1, timeLimit: .milliseconds(200))
        }
    }

    /// The request an input stands for: its JSON when it begins with `{` (nil when that does not
    /// decode), else the request ``UpdateDataRequestWriter`` writes from its bytes.
    static func request(from bytes: [UInt8]) -> (apply: ApplyId?, deltas: [Delta])? {
        if bytes.first == UInt8(ascii: "{") { return try? DeltaJSON.decodeRequest(bytes) }
        var writer = UpdateDataRequestWriter(bytes)
        return (nil, writer.deltas())
    }

    /// Applies a request and checks the stored rows against its answer: nil when they agree,
    /// else what is wrong.
    func apply(_ deltas: [Delta], apply: ApplyId?) async -> String? {
        let before: [String: [Value: [String: Value]]], after: [String: [Value: [String: Value]]]
        let answer: [Delta]?
        do {
            before = try rowsByKey()
            // A refusal of the whole request is an answer like any other.
            answer = try? await service.updateData(deltas, session: Session(values: ["User": "fuzz"]), apply: apply)
            after = try rowsByKey()
        } catch {
            return "\(error)"
        }
        guard let answer else {
            // Refused whole: nothing may have changed.
            return after == before ? nil : "a refused request changed the stored rows:\nbefore \(before)\nafter \(after)"
        }
        var expected = before
        for delta in answer {
            guard let fields = [("clients", Self.clientFields), ("orders", Self.orderFields)].first(where: { $0.0 == delta.tableName.lowercased() })?.1 else {
                return "the answer has a delta of table \(delta.tableName), which the request did not name"
            }
            let table = delta.tableName.lowercased()
            for change in delta.changes where change.status == .resolved {
                let old = fields[0].name
                let oldKey = change.oldValues[old].flatMap { try? fields[0].type.coerce($0) }
                var values = change.type == .insert ? [String: Value]() : oldKey.flatMap { expected[table]?[$0] } ?? [:]
                if change.type != .delete {
                    for field in fields {
                        if let value = change.refreshedValues[field.name] ?? change.newValues[field.name] { values[field.name] = try? field.type.coerce(value) }
                    }
                }
                if change.type != .insert, let oldKey { expected[table]?[oldKey] = nil }
                if change.type != .delete, let key = values[old] {
                    if expected[table]?[key] != nil { return "the answer resolves \(change.type) \(change.changeId) of \(delta.tableName) onto key \(key), which another row holds" }
                    expected[table]?[key] = Dictionary(uniqueKeysWithValues: fields.map { ($0.name, values[$0.name] ?? .null) })
                }
            }
        }
        guard after == expected else {
            return "the stored rows are not the rows before with the answer's resolved changes:\nrequest \(deltas)\nanswer \(answer)\nexpected \(expected)\nstored \(after)"
        }
        return nil
    }

    /// Every stored row of both tables, by table and primary key.
    private func rowsByKey() throws -> [String: [Value: [String: Value]]] {
        struct Unreadable: Error, CustomStringConvertible { let description: String }
        var rows: [String: [Value: [String: Value]]] = [:]
        for (table, key) in [("clients", "ClientId"), ("orders", "OrderId")] {
            let stored: [[String: Value]]
            do {
                stored = try service.storedRows(of: table)
            } catch {
                throw Unreadable(description: "the stored rows of \(table) cannot be read: \(error)")
            }
            var byKey: [Value: [String: Value]] = [:]
            for row in stored {
                let value = row[key] ?? .null
                guard byKey[value] == nil else { throw Unreadable(description: "two stored rows of \(table) have the key \(value)") }
                byKey[value] = row
            }
            rows[table] = byKey
        }
        return rows
    }
}

/// Reads bytes as a request: each change takes five bytes — its table and kind, its change id
/// (small, so ids repeat), its key (small, negative for a temporary one), a value, and its edits
/// (none, one, or a run with sequences that may repeat or go backwards). A byte with the top
/// bit set starts a new delta, so a request may name a table twice.
struct UpdateDataRequestWriter {
    private var bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    private mutating func next() -> UInt8? {
        guard position < bytes.count else { return nil }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func deltas() -> [Delta] {
        var deltas: [Delta] = []
        var sequence: Int64 = 1
        while let head = next(), let idByte = next(), let keyByte = next(), let valueByte = next(), let editsByte = next() {
            let isOrders = head & 1 == 1
            let type: DeltaChange.ChangeType = [.insert, .update, .delete, .update][Int(head >> 1 & 3)]
            let fields = isOrders ? UpdateDataHarness.orderFields : UpdateDataHarness.clientFields
            let table = isOrders ? "Orders" : "Clients"
            if head & 0x80 != 0 || deltas.last?.tableName != table {
                deltas.append(Delta(tableName: table, keyFields: [fields[0].name], loggedFields: fields.map(\.name), changes: []))
            }
            let key = Int64(Int8(bitPattern: keyByte) % 12)
            let value = Self.value(valueByte)
            var change = DeltaChange(changeId: Int(idByte % 16), type: type)
            let keyValue: Value = .integer(key)
            let valueField = isOrders ? "Amount" : "Credit"
            if type != .insert { change.oldValues = [fields[0].name: keyValue] }
            if type != .delete {
                change.newValues = [fields[0].name: keyValue, valueField: value]
                change.newValues[isOrders ? "ClientId" : "Name"] = isOrders ? .integer(Int64(valueByte % 4)) : .string(["Acme", "refuse", "Zed", ""][Int(valueByte % 4)])
            }
            switch editsByte % 4 {
            case 0: break   // no edits: one edit of newValues
            case 1: change.edits = []   // made by the client's rules
            default:
                var edits: [RowEdit] = []
                let count = Int(editsByte >> 2 % 4) + 1
                for step in 0..<count {
                    let kind: RowEdit.Kind = step == 0 && type == .insert ? .insert : step == count - 1 && type == .delete ? .delete : .update
                    edits.append(RowEdit(sequence: editsByte & 0x40 != 0 ? sequence : max(1, sequence - Int64(step)), kind: kind,
                                         values: kind == .delete ? [:] : [valueField: Self.value(valueByte &+ UInt8(step))]))
                    sequence += 1
                }
                change.edits = edits
            }
            deltas[deltas.count - 1].changes.append(change)
        }
        return deltas
    }

    private static func value(_ byte: UInt8) -> Value {
        switch byte % 8 {
        case 0: return .null
        case 1: return .string("text")
        case 2: return .double(2.5)
        default: return .integer(Int64(Int8(bitPattern: byte)) * 10)
        }
    }
}

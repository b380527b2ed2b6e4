import Dispatch
import Foundation
import FuzzSupport
import Relata
import RelataServer

/// UpdateData requests, as a hostile client with a valid login could send them, applied by an
/// in-process `DataService` over SQLite with row and delta rules. An input is read as a small
/// program that writes a request (see `RequestWriter`); one beginning with `{` is the request's
/// JSON itself. Two things must hold for every input: nothing traps, and afterwards the stored
/// rows are the rows before with exactly the answer's resolved changes made — nothing stored
/// twice, nothing the answer calls failed stored, nothing resolved missing.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzUpdateData(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = [UInt8](fuzzData(start, count))
    let request: (apply: ApplyId?, deltas: [Delta])
    if bytes.first == UInt8(ascii: "{") {
        guard let read = try? DeltaJSON.decodeRequest(bytes) else { return 0 }
        request = read
    } else {
        var writer = RequestWriter(bytes)
        request = (nil, writer.deltas())
    }
    Harness.shared.apply(request.deltas, apply: request.apply)
    return 0
}

/// The service, made once: its tables keep what earlier inputs stored (the check compares each
/// apply with the rows just before it).
final class Harness: Sendable {
    static let shared = Harness()
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

    private init() {
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
        } catch {
            fatalError("the fuzz harness could not start: \(error)")
        }
    }

    /// Applies a request and checks the stored rows against its answer.
    func apply(_ deltas: [Delta], apply: ApplyId?) {
        let before = rowsByKey()
        let answer = blocking { [service] in try await service.updateData(deltas, session: Session(values: ["User": "fuzz"]), apply: apply) }
        let after = rowsByKey()
        guard let answer else {
            // Refused whole: nothing may have changed.
            if after != before { fatalError("a refused request changed the stored rows:\nbefore \(before)\nafter \(after)") }
            return
        }
        var expected = before
        for delta in answer {
            guard let fields = [("clients", Self.clientFields), ("orders", Self.orderFields)].first(where: { $0.0 == delta.tableName.lowercased() })?.1 else {
                fatalError("the answer has a delta of table \(delta.tableName), which the request did not name")
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
                    if expected[table]?[key] != nil { fatalError("the answer resolves \(change.type) \(change.changeId) of \(delta.tableName) onto key \(key), which another row holds") }
                    expected[table]?[key] = Dictionary(uniqueKeysWithValues: fields.map { ($0.name, values[$0.name] ?? .null) })
                }
            }
        }
        if after != expected {
            fatalError("the stored rows are not the rows before with the answer's resolved changes:\nrequest \(deltas)\nanswer \(answer)\nexpected \(expected)\nstored \(after)")
        }
    }

    /// Every stored row of both tables, by table and primary key.
    private func rowsByKey() -> [String: [Value: [String: Value]]] {
        var rows: [String: [Value: [String: Value]]] = [:]
        for (table, key) in [("clients", "ClientId"), ("orders", "OrderId")] {
            guard let stored = try? service.storedRows(of: table) else { fatalError("the stored rows of \(table) cannot be read") }
            rows[table] = Dictionary(stored.map { ($0[key] ?? .null, $0) }, uniquingKeysWith: { first, _ in
                fatalError("two stored rows of \(table) have the key \(first[key] ?? .null)")
            })
        }
        return rows
    }
}

/// Runs async work to its end from the fuzzer's synchronous entry point; nil when it threw
/// (a refusal of the whole request is an answer like any other).
private func blocking<Result: Sendable>(_ work: @escaping @Sendable () async throws -> Result) -> Result? {
    let done = DispatchSemaphore(value: 0)
    let box = Box<Result>()
    Task {
        box.value = try? await work()
        done.signal()
    }
    done.wait()
    return box.value
}

private final class Box<Value>: @unchecked Sendable {
    // @unchecked Sendable: written by one task before the semaphore is signalled, read after the wait.
    var value: Value?
}

/// Reads bytes as a request: each change takes five bytes — its table and kind, its change id
/// (small, so ids repeat), its key (small, negative for a temporary one), a value, and its edits
/// (none, one, or a run with sequences that may repeat or go backwards). A byte with the top
/// bit set starts a new delta, so a request may name a table twice.
struct RequestWriter {
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
            let fields = isOrders ? Harness.orderFields : Harness.clientFields
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

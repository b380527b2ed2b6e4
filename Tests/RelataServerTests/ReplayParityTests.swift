import Foundation
import Logging
import Relata
import RelataScript
@testable import RelataServer
import RelataServerTestSupport
import Testing

/// The same rules give the same rows offline and on the server, for rules that are not
/// idempotent and rules that read other tables: the server replays the user's edits, in the
/// user's order, and the client ends with what the server stored.
@Suite(.timeLimit(.minutes(5))) struct ReplayParityTests {
    static let schema: SchemaDefinition = {
        let customers = TableDefinition(name: "Customers", fields: [
            FieldDefinition("CustomerId", .autoInc, primaryKey: true), FieldDefinition("Name", .string),
            FieldDefinition("Email", .string), FieldDefinition("Status", .string), FieldDefinition("History", .string),
            FieldDefinition("Touches", .integer), FieldDefinition("ServerNote", .string),
        ], script: RuleScript("""
            function beforePost(row) {
                row.Touches = row.Touches + 1;
                var same = lda.selectWhere('Customers', 'Email = :e', { e: row.Email })
                    .filter(function (other) { return other.CustomerId !== row.CustomerId; });
                if (same.length > 0) fail('the email ' + row.Email + ' is taken');
                row.ServerNote = isServer ? 'stamped by the server' : null;
            }
            function beforeUpdate(row, old) {
                if (row.Status !== old.Status) row.History = row.History + '>' + row.Status;
            }
            function beforeDelete(row) {
                var unpaid = lda.sql("SELECT COUNT(*) AS N FROM Invoices WHERE CustomerId = :c AND State = 'unpaid'", { c: row.CustomerId })[0].N;
                if (unpaid > 0) fail('has ' + unpaid + ' unpaid invoice(s)');
            }
            """, fileName: "Customers.js"))
        let invoices = TableDefinition(name: "Invoices", fields: [
            FieldDefinition("InvoiceId", .autoInc, primaryKey: true), FieldDefinition("CustomerId", .integer, required: true),
            FieldDefinition("State", .string),
        ], foreignKeys: [ForeignKeyDefinition(field: "CustomerId", references: "Customers", referencedField: "CustomerId")])
        let tags = TableDefinition(name: "Tags", fields: [FieldDefinition("TagId", .autoInc, primaryKey: true), FieldDefinition("Code", .string)])
        let checks = TableDefinition(name: "Checks", fields: [
            FieldDefinition("CheckId", .autoInc, primaryKey: true), FieldDefinition("TagCode", .string), FieldDefinition("Found", .string),
        ], script: RuleScript("""
            function beforeInsert(row) {
                row.Found = lda.selectWhere('Tags', 'Code = :c', { c: row.TagCode }).length > 0 ? 'yes' : 'no';
            }
            """, fileName: "Checks.js"))
        // Details first and a table order that lists Tags before Checks: neither may matter.
        return try! SchemaDefinition(name: "Probe", tables: [checks, invoices, customers, tags], updateOrder: ["Tags", "Checks"])
    }()

    static func seed() throws -> [DataTable] {
        let customers = try DataTable(name: "Customers", fields: schema.table(named: "Customers")!.fields)
        try customers.loadRows([[1, "Ann", "ann@x.test", "draft", "draft", 0, .null], [3, "Cy", "cy@x.test", "open", "open", 0, .null]])
        let invoices = try DataTable(name: "Invoices", fields: schema.table(named: "Invoices")!.fields)
        try invoices.loadRows([[2, 3, "paid"], [3, 3, "unpaid"]])
        let tags = try DataTable(name: "Tags", fields: schema.table(named: "Tags")!.fields)
        try tags.loadRows([[1, "aa"]])
        let checks = try DataTable(name: "Checks", fields: schema.table(named: "Checks")!.fields)
        return [customers, invoices, tags, checks]
    }

    /// The edits a user makes, on an adapter's tables.
    typealias Edits = @Sendable (_ table: (String) -> DataTable) throws -> Void

    static let scenarios: [(name: String, edits: Edits)] = [
        ("a rule that appends and counts, edited twice", { table in
            let ann = table("Customers").rows[0]
            try ann.setValue("open", forKey: "Status")
            try ann.setValue("void", forKey: "Status")
        }),
        ("a new customer edited after its insert", { table in
            let new = try table("Customers").addNewRow(values: ["Name": "Di", "Email": "di@x.test", "Status": "draft", "History": "draft", "Touches": 0])
            try new.setValue("open", forKey: "Status")
        }),
        ("an invoice deleted before its customer, whose rule counts unpaid invoices", { table in
            try table("Invoices").removeRow(table("Invoices").rows[1])
            try table("Invoices").removeRow(table("Invoices").rows[0])
            try table("Customers").removeRow(table("Customers").rows[1])
        }),
        ("a check inserted before the tag it looks up", { table in
            try table("Checks").addNewRow(values: ["TagCode": "zz"])
            try table("Tags").addNewRow(values: ["Code": "zz"])
            try table("Checks").addNewRow(values: ["TagCode": "zz"])
        }),
        ("an email taken, then freed, in that order", { table in
            let ann = table("Customers").rows[0], cy = table("Customers").rows[1]
            try ann.setValue("ann@y.test", forKey: "Email")
            try cy.setValue("ann@x.test", forKey: "Email")
        }),
        ("a new customer with an invoice, details listed first", { table in
            let new = try table("Customers").addNewRow(values: ["Name": "Ed", "Email": "ed@x.test", "Status": "draft", "History": "draft", "Touches": 0])
            try table("Invoices").addNewRow(values: ["CustomerId": new["CustomerId"], "State": "unpaid"])
        }),
    ]

    @Test(arguments: StorageBackend.allCases, scenarios.indices)
    func theServerStoresWhatOfflineStoresAndTheClientEndsWithIt(backend: StorageBackend, scenario: Int) async throws {
        let (name, edits) = Self.scenarios[scenario]
        var quiet = Logger(label: "relata.parity")
        quiet.logLevel = .critical

        // Offline: the user's edits on a LocalDataAdapter, applied to its own tables.
        let offline = try LocalDataAdapter(schema: Self.schema, tables: Self.seed(), logger: quiet)
        try edits { offline.table(named: $0)! }
        _ = try offline.applyChanges(for: offline.tables)
        let offlineRows = GeneratedParityTests.rows(of: offline.tables, committed: true)

        // The server: seeded with the same rows; a client (rules attached, edits recorded) sends its deltas.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("parity-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let (database, cleanup) = try backend.makeDatabase(in: folder)
        defer { cleanup(); try? FileManager.default.removeItem(at: folder) }
        let storage = try SQLStorage(database: database, schema: Self.schema)
        _ = try storage.seedIfEmpty(with: Self.seed())
        let service = try DataService(storage: storage, runtimes: 1, timeLimit: .seconds(2), logger: quiet)
        let client = try LocalDataAdapter(schema: Self.schema, tables: Self.seed(), logger: quiet)
        for table in client.tables { table.recordsEdits = true }
        try edits { client.table(named: $0)! }
        let deltas = try client.tables.map { try $0.makeDelta() }.filter { !$0.changes.isEmpty }
        let answer = try await service.updateData(deltas, session: Session())
        for delta in deltas {
            var processed = try #require(answer.first { $0.tableName == delta.tableName })
            let ids = Set(delta.changes.map(\.changeId))
            processed.changes = processed.changes.filter { ids.contains($0.changeId) }
            try client.table(named: delta.tableName)!.accept(processed)
        }

        var stored: [String: [String]] = [:]
        for table in client.tables { stored[table.name] = try GeneratedParityTests.describe(service.storedRows(of: table.name), of: table) }
        // The server's rules stamp what they store (`isServer`); everything else is the same.
        func unstamped(_ tables: [String: [String]]) -> [String: [String]] {
            tables.mapValues { $0.map { $0.replacingOccurrences(of: " ServerNote='stamped by the server'", with: " ServerNote=NULL") } }
        }
        #expect(unstamped(stored) == offlineRows, "\(name) on \(backend): the server stores what offline stores")
        #expect(GeneratedParityTests.rows(of: client.tables, committed: false) == stored, "\(name) on \(backend): the client ends with what was stored")
    }
}

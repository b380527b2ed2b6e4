import Foundation
import Logging
import Relata
import RelataScript
@testable import RelataServer
import RelataServerTestSupport
import Testing

/// The generated part of the differential: random rules drawn from a grammar of reads and
/// writes (counting, appending, `lda` reads of other rows, `lda` writes to other tables,
/// refusals) and random edit sequences across three tables, with a fixed seed. Every case
/// runs on four sites — offline (a LocalDataAdapter applies), the client's validation, a
/// SQLite server and a PostgreSQL server — which must give the same verdicts and store the
/// same rows; the client must end with the stored rows.
@Suite(.timeLimit(.minutes(10))) struct GeneratedParityTests {
    /// Cases per run; `RELATA_GENERATED_CASES` overrides (a longer hunt), `RELATA_GENERATED_SEED` the
    /// seed, and `RELATA_GENERATED_CASE` runs one case alone (the number a disagreement names).
    static let caseCount = ProcessInfo.processInfo.environment["RELATA_GENERATED_CASES"].flatMap(Int.init) ?? 200
    static let seed = ProcessInfo.processInfo.environment["RELATA_GENERATED_SEED"].flatMap(UInt64.init) ?? 0x5EED_2026
    static let onlyCase = ProcessInfo.processInfo.environment["RELATA_GENERATED_CASE"].flatMap(Int.init)

    @Test func everySiteAgreesOnGeneratedRulesAndEdits() async throws {
        var quiet = Logger(label: "relata.generated")
        quiet.logLevel = .critical
        var servers: [(StorageBackend, DataService, SQLStorage, () -> Void)] = []
        defer { for (_, _, _, cleanup) in servers { cleanup() } }
        for backend in StorageBackend.allCases {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("generated-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let (database, cleanup) = try backend.makeDatabase(in: folder)
            let storage = try SQLStorage(database: database, schema: Generator.schema(rules: [:]))
            let service = try DataService(storage: storage, runtimes: 1, timeLimit: .seconds(2), logger: quiet)
            servers.append((backend, service, storage, { cleanup(); try? FileManager.default.removeItem(at: folder) }))
        }

        var generator = Generator(seed: Self.seed)
        var disagreements: [String] = []
        for number in 1...max(Self.caseCount, Self.onlyCase ?? 0) where disagreements.count < 3 {
            let scenario = generator.scenario()
            if let only = Self.onlyCase, only != number { continue }
            let schema = Generator.schema(rules: scenario.rules)

            let offline = try LocalDataAdapter(schema: schema, tables: Generator.seedTables(), logger: quiet)
            scenario.edit(offline)
            let offlineVerdicts = Self.verdicts(try offline.applyChanges(for: offline.tables))
            let offlineRows = Self.rows(of: offline.tables, committed: true)

            for (backend, service, storage, _) in servers {
                try Self.reset(storage, backend: backend)
                try service.reloadRules(from: schema)
                let client = try LocalDataAdapter(schema: schema, tables: Generator.seedTables(), logger: quiet)
                for table in client.tables { table.recordsEdits = true }
                scenario.edit(client)
                let validated = Self.verdicts(try client.validateApply(for: client.tables))
                let deltas = try client.tables.map { try $0.makeDelta() }.filter { !$0.changes.isEmpty }
                if Self.onlyCase != nil { print(String(decoding: try DeltaJSON.encode(deltas), as: UTF8.self)) }
                let answer = deltas.isEmpty ? [] : try await service.updateData(deltas, session: Session())
                for delta in deltas {
                    guard var processed = answer.first(where: { $0.tableName == delta.tableName }) else { continue }
                    let ids = Set(delta.changes.map(\.changeId))
                    processed.changes = processed.changes.filter { ids.contains($0.changeId) }
                    try client.table(named: delta.tableName)!.accept(processed)
                }
                var stored: [String: [String]] = [:]
                for table in client.tables { stored[table.name] = Self.describe(try service.storedRows(of: table.name), of: table) }

                var differences: [String] = []
                if Self.verdicts(answer).filter({ offlineVerdicts.keys.contains($0.key) }) != offlineVerdicts {
                    differences.append("verdicts: offline \(offlineVerdicts.sorted { $0.key < $1.key }), \(backend) \(Self.verdicts(answer).sorted { $0.key < $1.key })")
                }
                if validated.mapValues(\.passed) != offlineVerdicts.mapValues(\.passed) {
                    differences.append("client validation: \(validated.sorted { $0.key < $1.key }), offline \(offlineVerdicts.sorted { $0.key < $1.key })")
                }
                if stored != offlineRows { differences.append("stored on \(backend): \(stored)\n    offline: \(offlineRows)") }
                let clientRows = Self.rows(of: client.tables, committed: true)
                if clientRows != stored { differences.append("the client after the answer: \(clientRows)\n    stored: \(stored)") }
                if !differences.isEmpty {
                    disagreements.append("case \(number) on \(backend):\n\(scenario)\n  " + differences.joined(separator: "\n  "))
                }
            }
        }
        #expect(disagreements.isEmpty, "seed \(Self.seed):\n\(disagreements.joined(separator: "\n\n"))")
    }

    /// Each change's verdict by "table/changeId": whether it passed, and why not.
    struct Verdict: Equatable, CustomStringConvertible {
        let passed: Bool
        let message: String?
        var description: String { passed ? "ok" : "failed(\(message ?? ""))" }
    }

    static func verdicts(_ deltas: [Delta]) -> [String: Verdict] {
        var result: [String: Verdict] = [:]
        for delta in deltas {
            for change in delta.changes {
                result["\(delta.tableName)/\(change.changeId)"] = Verdict(passed: change.status == .resolved, message: change.failure?.message)
            }
        }
        return result
    }

    /// Each table's rows as text, sorted: committed ones (original values, no pending inserts —
    /// a refused change stays pending with what the user typed) or as the rows hold them now.
    static func rows(of tables: [DataTable], committed: Bool) -> [String: [String]] {
        var result: [String: [String]] = [:]
        for table in tables {
            let rows = (table.rows + table.deletedRows).filter { !committed || $0.rowState != .added }
            result[table.name] = rows.map { row in
                table.fields.map { "\($0.name)=\((committed ? row.originalValue(forKey: $0.name) : row[$0.name]) ?? .null)" }.joined(separator: " ")
            }.sorted()
        }
        return result
    }

    static func describe(_ rows: [[String: Value]], of table: DataTable) -> [String] {
        rows.map { row in table.fields.map { "\($0.name)=\(row[$0.name] ?? .null)" }.joined(separator: " ") }.sorted()
    }

    /// Empties the tables (and their key counters) and seeds them again.
    static func reset(_ storage: SQLStorage, backend: StorageBackend) throws {
        let names = Generator.schema(rules: [:]).dependencyOrder.reversed().map(\.name)
        try storage.write { connection in
            for name in names { try connection.execute("DELETE FROM \(storage.sqlTable(name))", []) }
            if backend == .sqlite { try connection.execute("DELETE FROM sqlite_sequence", []) }
        }
        _ = try storage.seedIfEmpty(with: Generator.seedTables())
    }
}

/// Random rules and edits over three tables: Masters, their Details, and Tags.
struct Generator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    /// SplitMix64: small, fast, and the same on every platform.
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }

    static let fields: [String: [FieldDefinition]] = [
        "Masters": [FieldDefinition("MasterId", .autoInc, primaryKey: true), FieldDefinition("A", .integer),
                    FieldDefinition("B", .string), FieldDefinition("N", .integer)],
        "Details": [FieldDefinition("DetailId", .autoInc, primaryKey: true), FieldDefinition("MasterId", .integer, required: true),
                    FieldDefinition("V", .integer), FieldDefinition("S", .string)],
        "Tags": [FieldDefinition("TagId", .autoInc, primaryKey: true), FieldDefinition("Code", .string)],
    ]

    /// The grammar: handler bodies by table and event; a case draws some of each.
    static let fragments: [String: [String: [String]]] = [
        "Masters": [
            "beforePost": ["row.N = row.N + 1;", "row.B = row.B + '+';", "if (row.A > 90) fail('A too large: ' + row.A);"],
            "beforeUpdate": ["if (row.A !== old.A) row.B = row.B + '>' + row.A;"],
            "beforeInsert": ["row.B = 'new' + lda.sql('SELECT COUNT(*) AS C FROM Masters', {})[0].C;"],
            "beforeDelete": ["if (lda.selectWhere('Details', 'MasterId = :m', { m: row.MasterId }).length > 0) fail('master ' + row.MasterId + ' has details');"],
        ],
        "Details": [
            "beforePost": ["var m = lda.select('Masters', row.MasterId); if (!m) fail('no master ' + row.MasterId); row.S = row.S + m.A;",
                           "if (row.V < 0) fail('V negative: ' + row.V);"],
            "beforeInsert": ["row.S = 'sib' + lda.selectWhere('Details', 'MasterId = :m', { m: row.MasterId }).length;",
                             "var p = lda.select('Masters', row.MasterId); if (p) lda.update('Masters', row.MasterId, { N: p.N + 100 });"],
            "beforeDelete": ["lda.insert('Tags', { Code: 'gone' + row.DetailId });"],
        ],
        "Tags": [
            "onNewRow": ["row.Code = 'tag';"],
            "beforePost": ["row.Code = row.Code.toLowerCase();"],
        ],
    ]

    static func schema(rules: [String: String]) -> SchemaDefinition {
        let tables = ["Details", "Masters", "Tags"].map { name in
            TableDefinition(name: name, fields: fields[name]!, script: rules[name].map { RuleScript($0, fileName: "\(name).js") },
                            foreignKeys: name == "Details" ? [ForeignKeyDefinition(field: "MasterId", references: "Masters", referencedField: "MasterId")] : [])
        }
        // Details listed first, no update order: the edits' order is what counts.
        return try! SchemaDefinition(name: "Generated", tables: tables)
    }

    static func seedTables() -> [DataTable] {
        let masters = try! DataTable(name: "Masters", fields: fields["Masters"]!)
        try! masters.loadRows([[1, 10, "m1", 0], [2, 20, "m2", 0], [3, 30, "m3", 0]])
        let details = try! DataTable(name: "Details", fields: fields["Details"]!)
        try! details.loadRows([[1, 1, 1, "d1"], [2, 2, 2, "d2"], [3, 3, 3, "d3"], [4, 1, 4, "d4"]])
        let tags = try! DataTable(name: "Tags", fields: fields["Tags"]!)
        try! tags.loadRows([[1, "t1"]])
        return [masters, details, tags]
    }

    struct Scenario: CustomStringConvertible {
        let rules: [String: String]
        let edits: [Edit]

        /// Makes the edits on an adapter's tables; an edit the rules refuse is left out, as the user sees it fail.
        func edit(_ adapter: LocalDataAdapter) {
            for edit in edits { try? edit.make(on: adapter) }
        }

        var description: String {
            let shown = rules.sorted { $0.key < $1.key }.map { "  \($0.key).js:\n\($0.value)" }.joined(separator: "\n")
            return shown + "\n  edits: " + edits.map(\.description).joined(separator: "; ")
        }
    }

    /// One edit, with every random choice already drawn (so every site makes the same one).
    struct Edit: CustomStringConvertible {
        enum Kind { case update, insert, delete, twoFields }
        let kind: Kind
        let table: String
        /// Which row (an index into the visible rows, modulo their count).
        let pick: Int
        let values: [String: Value]

        func make(on adapter: LocalDataAdapter) throws {
            let table = adapter.table(named: self.table)!
            var values = self.values
            if let master = values["MasterId"]?.integerValue, master < 0 {
                // A master picked among the rows now (a new one's temporary key included).
                let masters = adapter.table(named: "Masters")!.rows
                guard !masters.isEmpty else { return }
                values["MasterId"] = masters[Int(-master) % masters.count]["MasterId"]
            }
            switch kind {
            case .insert:
                try table.addNewRow(values: values)
            case .update, .twoFields:
                let rows = table.rows
                guard !rows.isEmpty else { return }
                try rows[pick % rows.count].setValues(values)
            case .delete:
                let rows = table.rows
                guard !rows.isEmpty else { return }
                try table.removeRow(rows[pick % rows.count])
            }
        }

        var description: String { "\(kind) \(table)#\(pick) \(values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ","))" }
    }

    mutating func scenario() -> Scenario {
        var rules: [String: String] = [:]
        for (table, events) in Self.fragments.sorted(by: { $0.key < $1.key }) {
            var handlers: [String] = []
            for (event, bodies) in events.sorted(by: { $0.key < $1.key }) {
                let chosen = bodies.filter { _ in chance(40) }
                guard !chosen.isEmpty else { continue }
                let parameters = event == "beforeUpdate" ? "row, old" : "row"
                handlers.append("function \(event)(\(parameters)) {\n    " + chosen.joined(separator: "\n    ") + "\n}")
            }
            if !handlers.isEmpty { rules[table] = handlers.joined(separator: "\n") }
        }
        var edits: [Edit] = []
        for _ in 0..<(1 + below(6)) {
            let pick = below(8)
            switch below(9) {
            case 0: edits.append(Edit(kind: .update, table: "Masters", pick: pick, values: ["A": .integer(Int64(below(100)))]))
            case 1: edits.append(Edit(kind: .twoFields, table: "Masters", pick: pick, values: ["A": .integer(Int64(below(100))), "B": .string("u\(below(9))")]))
            case 2: edits.append(Edit(kind: .update, table: "Details", pick: pick, values: ["V": .integer(Int64(below(20) - 3))]))
            case 3: edits.append(Edit(kind: .update, table: "Details", pick: pick, values: ["MasterId": .integer(-Int64(1 + below(8)))]))
            case 4: edits.append(Edit(kind: .insert, table: "Masters", pick: pick, values: ["A": .integer(Int64(below(100))), "B": "u", "N": 0]))
            case 5: edits.append(Edit(kind: .insert, table: "Details", pick: pick,
                                      values: ["MasterId": .integer(-Int64(1 + below(8))), "V": .integer(Int64(below(10))), "S": ""]))
            case 6: edits.append(Edit(kind: .insert, table: "Tags", pick: pick, values: ["Code": .string("X\(below(5))")]))
            case 7: edits.append(Edit(kind: .delete, table: ["Masters", "Details", "Tags"][below(3)], pick: pick, values: [:]))
            default: edits.append(Edit(kind: .update, table: "Tags", pick: pick, values: ["Code": .string("Y\(below(5))")]))
            }
        }
        return Scenario(rules: rules, edits: edits)
    }
}

import Foundation
import Logging
import Relata
import RelataRemote
import RelataScript
import RelataTools
import Testing

/// The mission's promise: the same rule scripts give the same verdicts, messages and values
/// offline (a LocalDataAdapter), on the client just before a remote apply (validation against a
/// live server), and on the server — on SQLite and on PostgreSQL (the changes applied, the
/// results re-fetched).
///
/// One scenario at a time: each starts its own server, and running sixty at once beside the
/// other suites would starve the servers' request handlers on a two-core machine.
@Suite(.timeLimit(.minutes(10))) struct DifferentialTests {
    /// What a site made of one edit: everything but the row's label (keys are temporary until applied).
    struct Outcome: Equatable, CustomStringConvertible {
        var verdict: String
        var kind: String?
        var message: String?
        var location: String?
        var event: String?
        var values: [String: JSONValue]?

        init(_ verdict: EditRun.EditVerdict) {
            self.verdict = verdict.verdict == .validated ? EditRun.EditVerdict.Verdict.applied.rawValue : verdict.verdict.rawValue
            kind = verdict.kind?.rawValue
            message = verdict.message
            location = verdict.location
            event = verdict.event
            values = verdict.values
        }

        var description: String {
            let shown = values.map { values in values.keys.sorted().map { "\($0)=\(values[$0]!)" }.joined(separator: ", ") }
            return [verdict, kind, event, location, message, shown].compactMap { $0 }.joined(separator: " | ")
        }
    }

    @Test(.serialized, arguments: DifferentialCorpus.scenarios)
    func theSameVerdictsOfflineOnTheClientAndOnTheServer(_ scenario: Scenario) async throws {
        #expect(!scenario.edits.isEmpty)
        let started = Date()
        // 1. Offline.
        let schema = try Schema(contentsOf: PCTradeServer.schemaFile)
        var quiet = Logger(label: "relata.differential")
        quiet.logLevel = .critical
        let local = try schema.makeAdapter(logger: quiet)
        local.session = PCTradeServer.session(of: scenario.user)
        var offlineRun = EditRun(edits: scenario.edits, on: local.tables)
        offlineRun.record(try local.applyChanges(for: local.tables))
        let offline = offlineRun.report()
        let offlineStored = Self.clockless(Self.committedRows(of: local.tables), since: started)

        let server = try PCTradeServer()
        try await server.serve { url in
            let adapter = RemoteDataAdapter(targetURL: url, dataService: "DataService.PCTrade", logger: quiet)
            adapter.credentials = RemoteCredentials(user: scenario.user, password: scenario.user)
            _ = try await adapter.getDataTables(local.tables.map { DataRequest(table: $0.name) })

            // 2. Client-side validation against the live server.
            var clientRun = EditRun(edits: scenario.edits, on: adapter.tables)
            let changed = adapter.tables.filter(\.hasChanges)
            clientRun.record(try await adapter.validateChanges(for: changed), passing: .validated)
            let client = clientRun.report()

            // 3. Applied on the server, which decides alone (no validation here first).
            adapter.validatesChangesLocally = false
            var serverRun = clientRun
            serverRun.record(try await adapter.applyChanges(for: changed))
            let applied = serverRun.report()
            let clientAfter = Self.clockless(Self.committedRows(of: adapter.tables), since: started)

            // 4. Applied on a server whose data lives in PostgreSQL.
            let postgres = try PCTradeServer(backend: .postgres)
            let (onPostgres, postgresStored) = try await Self.applied(scenario, on: postgres, tables: local.tables.map(\.name), logger: quiet)

            var differences: [String] = []
            for (index, edit) in scenario.edits.enumerated() {
                let sites = [("offline", offline.verdicts[index]), ("client", client.verdicts[index]), ("server", applied.verdicts[index]),
                             ("postgres", onPostgres.verdicts[index])]
                let outcomes = sites.map { ($0.0, Outcome($0.1)) }
                if outcomes.contains(where: { $0.1 != outcomes[0].1 }) || offline.verdicts[index].row != applied.verdicts[index].row
                    || offline.verdicts[index].row != onPostgres.verdicts[index].row {
                    differences.append("edit \(index + 1) \(edit.summary):")
                    for ((site, outcome), verdict) in zip(outcomes, sites.map(\.1)) {
                        differences.append("  \(site.padding(toLength: 8, withPad: " ", startingAt: 0)) \(verdict.row ?? "-") | \(outcome)")
                    }
                }
            }
            // The data the server holds afterwards is what the offline apply committed.
            let stored = Self.clockless(try Self.storedRows(on: server, tables: local.tables.map(\.name)), since: started)
            for (site, held) in [("server", stored), ("postgres", Self.clockless(postgresStored, since: started))] {
                for (table, rows) in offlineStored where held[table] != rows {
                    let keys = Set(rows.keys).union(held[table]?.keys ?? [:].keys).sorted()
                    for key in keys where rows[key] != held[table]?[key] {
                        differences.append("\(table) row \(key): offline \(rows[key].map(Self.show) ?? "absent"), \(site) \(held[table]?[key].map(Self.show) ?? "absent")")
                    }
                }
            }
            // The client ends with what the server stored.
            for (table, rows) in stored where clientAfter[table] != rows {
                for key in Set(rows.keys).union(clientAfter[table]?.keys ?? [:].keys).sorted() where rows[key] != clientAfter[table]?[key] {
                    differences.append("\(table) row \(key): stored \(rows[key].map(Self.show) ?? "absent"), the client's \(clientAfter[table]?[key].map(Self.show) ?? "absent")")
                }
            }
            #expect(differences.isEmpty, "\(scenario.name):\n\(differences.joined(separator: "\n"))")
        }
    }

    /// The edits applied on a server that decides alone (no validation on the client first), and
    /// the rows it stores afterwards.
    static func applied(_ scenario: Scenario, on server: PCTradeServer, tables: [String],
                        logger: Logger) async throws -> (EditRun.Report, [String: [Int64: [String: Value]]]) {
        var report: EditRun.Report?
        try await server.serve { url in
            let adapter = RemoteDataAdapter(targetURL: url, dataService: "DataService.PCTrade", logger: logger)
            adapter.credentials = RemoteCredentials(user: scenario.user, password: scenario.user)
            _ = try await adapter.getDataTables(tables.map { DataRequest(table: $0) })
            var run = EditRun(edits: scenario.edits, on: adapter.tables)
            adapter.validatesChangesLocally = false
            run.record(try await adapter.applyChanges(for: adapter.tables.filter(\.hasChanges)))
            report = run.report()
        }
        guard let report else { throw CancellationError() }
        return (report, try storedRows(on: server, tables: tables))
    }

    @Test func theCorpusIsLargeEnoughAndCoversEveryKindOfVerdict() throws {
        #expect(DifferentialCorpus.scenarios.count >= 50)
        #expect(Set(DifferentialCorpus.scenarios.map(\.name)).count == DifferentialCorpus.scenarios.count)
    }

    /// What a table holds as committed: every row that is not a pending insert, with its original values.
    static func committedRows(of tables: [DataTable]) -> [String: [Int64: [String: Value]]] {
        var result: [String: [Int64: [String: Value]]] = [:]
        for table in tables {
            let key = table.primaryKeyFields[0].name
            var rows: [Int64: [String: Value]] = [:]
            for row in table.rows + table.deletedRows where row.rowState != .added {
                let values = Dictionary(uniqueKeysWithValues: table.fields.map { ($0.name, row.originalValue(forKey: $0.name) ?? .null) })
                rows[values[key]?.integerValue ?? 0] = values
            }
            result[table.name] = rows
        }
        return result
    }

    static func storedRows(on server: PCTradeServer, tables: [String]) throws -> [String: [Int64: [String: Value]]] {
        var result: [String: [Int64: [String: Value]]] = [:]
        for table in tables {
            let key = server.service.storage.schema.table(named: table)?.fields.first(where: \.primaryKey)?.name ?? ""
            result[table] = try server.storedRows(table, key: key)
        }
        return result
    }

    /// Dates a rule took from the clock (`new Date()` in `onNewRow`) differ by when each site ran:
    /// they compare as equal once both are after the scenario started.
    static func clockless(_ tables: [String: [Int64: [String: Value]]], since start: Date) -> [String: [Int64: [String: Value]]] {
        tables.mapValues { rows in
            rows.mapValues { row in
                row.mapValues { value in
                    if case .date(let date) = value, date >= start { return .string("a time during the run") }
                    return value
                }
            }
        }
    }

    static func show(_ row: [String: Value]) -> String {
        row.keys.sorted().map { "\($0)=\(row[$0]!)" }.joined(separator: ", ")
    }
}

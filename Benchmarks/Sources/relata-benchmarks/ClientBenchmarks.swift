// The client side by side with its floors: a 1,000,000-row fetch through the
// RemoteDataAdapter vs the server benchmark's raw fetch (the row stream read straight
// into a DataTable); validating 100,000 changes before an apply vs the same validation
// in a LocalDataAdapter over the same rows and rules.
import Foundation
import Relata
import RelataRemote
import RelataScript

@MainActor func runClientBenchmarks(port: Int, count: Int, changes: Int, schema: SchemaDefinition, client: BenchClient, token: String) async throws {
    let url = URL(string: "http://127.0.0.1:\(port)")!
    func adapter() async throws -> RemoteDataAdapter {
        let adapter = RemoteDataAdapter(targetURL: url, logger: quietLogger)
        adapter.credentials = RemoteCredentials(user: "bench", password: "bench")
        try await adapter.loadSchema()   // login and rules download stay out of the timings
        return adapter
    }

    // 1. Fetching: a new adapter per round, so each round fills an empty table.
    var adapters: [RemoteDataAdapter] = []
    for _ in 0..<3 { adapters.append(try await adapter()) }
    var fetched = 0
    let through = try await measureAsync(repetitions: 3) {
        fetched = try await adapters.removeLast().getDataTable("Clients").rowCount
    }
    precondition(fetched == count, "fetched \(fetched) of \(count) rows")
    let raw = try await measureAsync(repetitions: 3) { _ = try await client.fetchTable("Clients", token: token) }
    progress("fetched through the adapter")

    // 2. Validating: the same edits on the same rows, through the remote adapter and a local one.
    let remote = try await adapter()
    let lines = try await remote.getDataTable("Lines")
    let local = try LocalDataAdapter(schema: schema, tables: [try ItemTable.table(changes, name: "Lines")], logger: quietLogger)
    let localLines = local.table(named: "Lines")!
    let edit = ItemTable.incrementQuantities(of:)
    progress("editing through the adapter")
    let editRemote = try measure(repetitions: 1) { try edit(lines) }
    progress("editing locally")
    let editLocal = try measure(repetitions: 1) { try edit(localLines) }
    var remoteVerdicts = 0, localVerdicts = 0
    let validateRemote = try await measureAsync(repetitions: 3) {
        remoteVerdicts = try await remote.validateChanges(for: [lines]).flatMap(\.changes).filter { $0.status == .resolved }.count
    }
    let validateLocal = try measure(repetitions: 3) {
        localVerdicts = try local.validateApply(for: [localLines]).flatMap(\.changes).filter { $0.status == .resolved }.count
    }
    precondition(remoteVerdicts == changes && localVerdicts == changes, "\(remoteVerdicts), \(localVerdicts) of \(changes) changes passed")
    progress("validated")

    print("")
    print("| client operation | RemoteDataAdapter | floor | adapter ÷ floor |")
    print("|---|---|---|---|")
    print("| fetch \(count) rows into the adapter's table vs the raw row-stream fetch into a DataTable | \(milliseconds(through)) | \(milliseconds(raw)) | \(ratio(through, raw)) |")
    print("| edit \(changes) rows (row rules run as rows change) vs the same edits in a LocalDataAdapter | \(milliseconds(editRemote)) | \(milliseconds(editLocal)) | \(ratio(editRemote, editLocal)) |")
    print("| validate \(changes) changes before an apply (delta rules, foreign keys) vs LocalDataAdapter.validateApply | \(milliseconds(validateRemote)) | \(milliseconds(validateLocal)) | \(ratio(validateRemote, validateLocal)) |")
}

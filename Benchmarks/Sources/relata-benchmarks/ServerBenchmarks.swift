// The data server side by side with its floors: a 1,000,000-row fetch over loopback
// vs reading the same SQLite file in-process; 100,000 changes applied with server
// rules vs one raw SQLite transaction; small GetData requests under 32 concurrent
// clients (wrk) vs a bare Hummingbird handler answering the same bytes.
import CBenchmarkSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Hummingbird
import Relata
import RelataScript
import RelataRemote
import RelataServer

func runServerBenchmarks(count: Int, parts: Set<String>, postgresURL: String? = nil) async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("relata-server-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let changes = min(count, 100_000)
    let postgres = try postgresURL.map(PostgresBenchStore.init(serverURL:))
    defer { postgres?.drop() }
    let store: any BenchStore = postgres ?? SQLiteBenchStore(path: folder.appendingPathComponent("bench.sqlite").path)
    print("Relata server benchmarks on \(postgres == nil ? "SQLite" : "PostgreSQL") — fetch \(count) rows, apply \(changes) changes")

    let schema = try SchemaDefinition(name: "Bench", tables: [
        TableDefinition(name: "Clients", fields: Dataset.fields),
        TableDefinition(name: "Items", fields: ItemTable.fields, script: RuleScript(ItemTable.rules, fileName: "items.js")),
        TableDefinition(name: "Lines", fields: ItemTable.fields, script: RuleScript(ItemTable.linesRules, fileName: "lines.js")),
        TableDefinition(name: "Notes", fields: NoteTable.fields, script: RuleScript(NoteTable.rules, fileName: "notes.js")),
    ])
    let database = try store.openDatabase()
    let storage = try SQLStorage(database: database, schema: schema)
    let dataset = Dataset(count: count)
    let clients = try DataTable(name: "Clients", fields: Dataset.fields)
    try clients.loadRows(dataset.relataRows)
    try storage.seedIfEmpty(with: [clients, try ItemTable.table(changes), try ItemTable.table(changes, name: "Lines")])
    progress("seeded")
    let service = try DataService(storage: storage)
    let sessions = try store.openSessions(database)
    let user = ServerUser(name: "bench", passwordHash: ServerUser.hash(password: "bench", cost: 4))
    let services = try ServerServices(dataServices: [service], login: LoginService(users: [user], sessions: sessions))

    try await withServer(RelataHTTPServer.application(services: services, configuration: ServerConfiguration(port: 0, maxBodyBytes: 1 << 30),
                                                      logger: quietLogger, onServerRunning: PortBox.report)) { port in
        let client = BenchClient(port: port)
        progress("server on port \(port)")
        let token = try await client.login()
        progress("logged in")

        print("")
        print("| operation | Relata server | floor | Relata ÷ floor | throughput vs floor |")
        print("|---|---|---|---|---|")
        if parts.contains("fetch") {
        var fetched = 0
        let fetch = try await measureAsync(repetitions: 3) {
            fetched = try await client.fetchTable("Clients", token: token).rowCount
        }
        precondition(fetched == count, "fetched \(fetched) of \(count) rows")
        progress("fetched")
        var floorRows = 0
        let floor = try await measureAsync(repetitions: 3) { floorRows = try await store.readClients() }
        precondition(floorRows == count)
        print("| fetch \(count) rows over loopback into a DataTable vs \(store.fetchFloor) | \(milliseconds(fetch)) | \(milliseconds(floor)) | \(ratio(fetch, floor)) | \(percent(floor / fetch)) |")
        }

        if parts.contains("apply") {
        if ProcessInfo.processInfo.environment["RELATA_PROFILE"] == "endtoend" {   // for `perf record`: the adapter's rounds alone
            _ = try await measureEndToEndApply(port: port, changes: changes, repetitions: 3)
            return
        }
        // The stored items fetched again, every quantity one more (each edit recorded, or not).
        func editedItems(recordingEdits: Bool = false) async throws -> DataTable {
            let table = try await client.fetchTable("Items", token: token)
            table.recordsEdits = recordingEdits
            try ItemTable.incrementQuantities(of: table)
            return table
        }
        let items = try await client.fetchTable("Items", token: token)
        let start = ContinuousClock.now
        try ItemTable.incrementQuantities(of: items)
        let edit = ContinuousClock.now - start
        var resolved = 0
        var answer = Data()
        let apply = try await measureAsync(repetitions: 1) {
            (resolved, answer) = try await client.updateData(items.makeDelta(), token: token)
        }
        precondition(resolved == changes, "\(resolved) of \(changes) changes resolved")
        progress("applied")
        // The same apply as `RemoteDataAdapter` sends it: the answer without the values sent.
        let minimalItems = try await editedItems()
        var minimalAnswer = Data()
        let minimalApply = try await measureAsync(repetitions: 1) {
            (resolved, minimalAnswer) = try await client.updateData(minimalItems.makeDelta(), token: token, prefer: "return=minimal")
        }
        precondition(resolved == changes, "\(resolved) of \(changes) changes resolved with a minimal answer")
        progress("applied with a minimal answer")
        // The same with the request and the answer in the binary form (`DeltaBinary`).
        let binaryItems = try await editedItems()
        var binaryAnswer = Data()
        let binaryApply = try await measureAsync(repetitions: 1) {
            (resolved, binaryAnswer) = try await client.updateData(binaryItems.makeDelta(), token: token, prefer: "return=minimal", binary: true)
        }
        precondition(resolved == changes, "\(resolved) of \(changes) changes resolved in the binary form")
        progress("applied in the binary form")
        // Where the time goes: the same kind of delta through the service in-process, and its JSON.
        let delta = try await editedItems().makeDelta()
        var json = Data()
        let encode = try measure(repetitions: 1) { json = try DeltaJSON.encode([delta]) }
        let decode = try measure(repetitions: 1) { _ = try DeltaJSON.decode(json) }
        var binary = Data()
        let binaryEncode = try measure(repetitions: 1) { binary = try DeltaBinary.encode([delta]) }
        let binaryDecode = try measure(repetitions: 1) { _ = try DeltaBinary.decode(binary) }
        let foundationEncode = try measure(repetitions: 1) { _ = try JSONEncoder().encode(["deltas": [delta]]) }
        let foundationDecode = try measure(repetitions: 1) { _ = try JSONDecoder().decode([String: [Delta]].self, from: json) }
        var direct = 0
        let inProcess = try await measureAsync(repetitions: 1) {
            direct = try await service.updateData([delta], session: Session())[0].changes.filter { $0.status == .resolved }.count
        }
        precondition(direct == changes)
        progress("applied in-process")
        // The same with each change's edits recorded, as `RemoteDataAdapter` sends them (the server
        // replays the edits; a delta without them is replayed as one edit of the values that differ).
        let recordedDelta = try await editedItems(recordingEdits: true).makeDelta()
        let inProcessRecorded = try await measureAsync(repetitions: 1) {
            direct = try await service.updateData([recordedDelta], session: Session())[0].changes.filter { $0.status == .resolved }.count
        }
        precondition(direct == changes)
        progress("applied in-process with recorded edits")
        if ProcessInfo.processInfo.environment["RELATA_PROFILE"] == "apply" {   // for `perf record`: the in-process apply, again and again
            let withEdits = ProcessInfo.processInfo.environment["RELATA_EDITS"] == "recorded"   // else deltas without edits
            for _ in 0..<5 {
                let delta = try await editedItems(recordingEdits: withEdits).makeDelta()
                let start = ContinuousClock.now, cpu = processCPUSeconds()
                _ = try await service.updateData([delta], session: Session())
                progress("profiled an apply in-process: \(milliseconds((ContinuousClock.now - start).seconds)), CPU \(milliseconds(processCPUSeconds() - cpu))")
            }
            return
        }
        let rawApply = try await measureAsync(repetitions: 1) { try await store.incrementQuantities(changes) }
        // Two more floors bound what any apply could reach: the database's own part of a checked
        // apply, and the JSON request and answer carried over loopback by a handler that does nothing.
        var checkedWrites: Double?
        if let file = (store as? SQLiteBenchStore).map({ SQLiteFile(path: $0.path) }) {
            var updated = 0
            // The best of three runs, as the rules' part below: each reads the rows as the run before left them.
            checkedWrites = times(repetitions: 3) {
                updated = file.readAndUpdateComparingOriginals(changes)
                precondition(updated == changes, "\(updated) of \(changes) rows updated")
            }.first
        }
        // The rules' part alone (RuleCallFloor.swift): the row rule called once per change, the
        // best of three runs (JavaScriptCore's tiers make single runs uneven).
        #if canImport(CBenchmarkJavaScriptCore)
        // The rules of `Lines`, the table the round edits: its row rule is `Items`', and it has a delta rule.
        let rules = RuleCallFloor(script: ItemTable.linesRules)
        var failures = 0
        let ruleCalls: Double? = times(repetitions: 3) { failures = rules.run(changes) }.first
        precondition(failures == 0, "the rule failed \(failures) times")
        let ruleLoop: Double? = times(repetitions: 3) { failures = rules.runInJavaScript(changes) }.first
        precondition(failures == 0, "the rule failed \(failures) times in the JavaScript loop")
        // Nested in one entry into JavaScript, as the round's edits are (one `performBatchUpdates`).
        let ruleCallsOnBulkRows: Double? = times(repetitions: 3) { failures = rules.runOnRowsMadeInBulk(changes, inOneEntry: true) }.first
        precondition(failures == 0, "the rule failed \(failures) times on rows made in bulk")
        let deltaRuleLoop: Double? = times(repetitions: 3) { failures = rules.runDeltaRuleInJavaScript(changes) }.first
        precondition(failures == 0, "the delta rule failed \(failures) times in the JavaScript loop")
        #else
        let ruleCalls: Double? = nil, ruleLoop: Double? = nil, ruleCallsOnBulkRows: Double? = nil, deltaRuleLoop: Double? = nil
        #endif
        // The round edits in one batch: its observers are told once, two posts in all.
        let notifications = try notificationFloor(1)
        // Target 1 as a user meets it: edit + validate + apply through `RemoteDataAdapter`, against
        // the transport of the bytes it sends and gets (the binary form, the minimal answer).
        let endToEnd = try await measureEndToEndApply(port: port, changes: changes, repetitions: 3)
        let binaryRequest = try DeltaBinary.encode([recordedDelta])
        let binaryTransport = try await withServer(bareServer(answer: binaryAnswer)) { barePort in
            try await quickestAsync(repetitions: 3) { _ = try await BenchClient(port: barePort).post("/v2/DataService/UpdateData", body: binaryRequest, token: token) }
        }
        let transport = try await withServer(bareServer(answer: answer)) { barePort in
            try await measureAsync(repetitions: 3) { _ = try await BenchClient(port: barePort).post("/v2/DataService/UpdateData", body: json, token: token) }
        }
        let minimalTransport = try await withServer(bareServer(answer: minimalAnswer)) { barePort in
            try await measureAsync(repetitions: 3) { _ = try await BenchClient(port: barePort).post("/v2/DataService/UpdateData", body: json, token: token) }
        }
        print("| apply \(changes) updates with server rules (HTTP, JSON delta) vs \(store.applyFloor) | \(milliseconds(apply)) | \(milliseconds(rawApply)) | \(ratio(apply, rawApply)) | \(percent(rawApply / apply)) |")
        print("| … the same with `Prefer: return=minimal`, as `RemoteDataAdapter` asks (an answer of \(minimalAnswer.count / 1024) KiB) | \(milliseconds(minimalApply)) | \(milliseconds(rawApply)) | \(ratio(minimalApply, rawApply)) | \(percent(rawApply / minimalApply)) |")
        print("| … the same with the request and the minimal answer in the binary form (`application/vnd.relata.delta`, an answer of \(binaryAnswer.count / 1024) KiB) | \(milliseconds(binaryApply)) | \(milliseconds(rawApply)) | \(ratio(binaryApply, rawApply)) | \(percent(rawApply / binaryApply)) |")
        print("| … the same through `DataService.updateData` in-process (rules, conflict checks, SQL) | \(milliseconds(inProcess)) | \(milliseconds(rawApply)) | \(ratio(inProcess, rawApply)) | \(percent(rawApply / inProcess)) |")
        print("| … the same in-process with each change's edits recorded, as `RemoteDataAdapter` sends them | \(milliseconds(inProcessRecorded)) | \(milliseconds(rawApply)) | \(ratio(inProcessRecorded, rawApply)) | \(percent(rawApply / inProcessRecorded)) |")
        if let checkedWrites {
            print("| … the database's part alone: the touched rows read by key, one `UPDATE` per change comparing its originals (SQLite's C API, best of 3) | \(milliseconds(checkedWrites)) | \(milliseconds(rawApply)) | \(ratio(checkedWrites, rawApply)) | \(percent(rawApply / checkedWrites)) |")
        }
        if let ruleCalls {
            print("| … the rules' part alone: `beforeUpdate(row, old)` called once per change through JavaScriptCore's C API, its two objects made from Swift values (best of 3) | \(milliseconds(ruleCalls)) | \(milliseconds(rawApply)) | \(ratio(ruleCalls, rawApply)) | \(percent(rawApply / ruleCalls)) |")
        }
        print("| … the transport alone: the request's and the answer's JSON (\(json.count / 1024) KiB, \(answer.count / 1024) KiB) over loopback to a handler that does nothing | \(milliseconds(transport)) | \(milliseconds(rawApply)) | \(ratio(transport, rawApply)) | \(percent(rawApply / transport)) |")
        print("| … the transport alone with the minimal answer (\(minimalAnswer.count / 1024) KiB) | \(milliseconds(minimalTransport)) | \(milliseconds(rawApply)) | \(ratio(minimalTransport, rawApply)) | \(percent(rawApply / minimalTransport)) |")
        if let postgres {
            let oneStatement = try await measureAsync(repetitions: 1) { try await postgres.incrementQuantitiesInOneStatement(changes) }
            print("| … and vs one `UPDATE` of all \(changes) rows through postgres-nio (PostgreSQL's best case) | \(milliseconds(apply)) | \(milliseconds(oneStatement)) | \(ratio(apply, oneStatement)) | \(percent(oneStatement / apply)) |")
        }
        if let checkedWrites, let ruleCalls {
            let floor = checkedWrites + ruleCalls
            print("")
            print("| the in-process apply with recorded edits against its floors | floor | apply ÷ floor |")
            print("|---|---|---|")
            print("| the database's part | \(milliseconds(checkedWrites)) | \(ratio(inProcessRecorded, checkedWrites)) |")
            print("| the database's part + the rules' part (one rule call per change) | \(milliseconds(floor)) | \(ratio(inProcessRecorded, floor)) |")
            print("| … that floor ÷ the database's part: the least any replaying apply could reach against the database's part | | \(ratio(floor, checkedWrites)) |")
        }
        let median = endToEnd[endToEnd.count / 2]
        print("")
        print("| edit + validate + apply of \(changes) changes through `RemoteDataAdapter` (the binary form), median of \(endToEnd.count) rounds | time | ÷ (the database's part + the transport) |")
        print("|---|---|---|")
        if let checkedWrites {
            let budget = checkedWrites + binaryTransport
            print("| the round: edit in one `performBatchUpdates` (the row rule as each row changes), then `applyChanges` | \(milliseconds(median.total)) | **\(ratio(median.total, budget))** |")
            print("| … the quickest of the \(endToEnd.count) rounds | \(milliseconds(endToEnd[0].total)) | \(ratio(endToEnd[0].total, budget)) |")
            print("| … the edit | \(milliseconds(median.edit)) | \(ratio(median.edit, budget)) |")
            print("| … the apply (validated here, sent, replayed and stored, the answer folded back) | \(milliseconds(median.apply)) | \(ratio(median.apply, budget)) |")
            print("| the database's part + the transport of the request and the minimal answer in binary (\(binaryRequest.count / 1024) KiB, \(binaryAnswer.count / 1024) KiB; each the best of 3) | \(milliseconds(budget)) | 1.00× |")
            if let ruleCalls {
                let least = checkedWrites + binaryTransport + 2 * ruleCalls
                print("| the least a round could take: that + the rules' part twice (the row rule once per edit on the client, once per replayed edit on the server) | \(milliseconds(least)) | \(ratio(least, budget)) |")
            }
            if let ruleCalls, let ruleLoop {
                // The client's calls cannot be fewer (each edit's verdict is its own); a server could run its replay inside JavaScript.
                let strict = checkedWrites + binaryTransport + ruleCalls + ruleLoop
                print("| … with the server's calls made by a loop in JavaScript on rows made there instead (\(milliseconds(ruleLoop)), best of 3), the client's still through the C API | \(milliseconds(strict)) | \(ratio(strict, budget)) |")
                if let deltaRuleLoop, let ruleCallsOnBulkRows {
                    // What the table's rules and `DataTable`'s contract add to any implementation: the delta rule
                    // checks every change on the client (validation) and on the server, and the batch posts two
                    // notifications. The client's calls at their least: one property set and one nested call an edit.
                    let owed = checkedWrites + binaryTransport + ruleCallsOnBulkRows + ruleLoop + 2 * deltaRuleLoop + notifications
                    print("| … with the client's calls on row objects made in bulk beforehand, one value set and one call an edit nested in one entry (\(milliseconds(ruleCallsOnBulkRows)), best of 3), + the delta rule (`beforeProcessDeltaChange`) by a loop in JavaScript on changes made there, on the client and on the server (\(milliseconds(deltaRuleLoop)) each, best of 3), + the batch's two notifications (\(milliseconds(notifications)), best of 3): **the least a round with these rules, its validation and the observers' notifications could take** | \(milliseconds(owed)) | **\(ratio(owed, budget))** |")
                }
            }
        }
        print("")
        print("Editing the \(changes) rows on the client before the apply: \(milliseconds(edit.seconds)). The delta as JSON (\(json.count / 1024) KiB): encoding \(milliseconds(encode)), decoding \(milliseconds(decode)) (Foundation's Codable: \(milliseconds(foundationEncode)), \(milliseconds(foundationDecode))). The same in binary (`DeltaBinary`, \(binary.count / 1024) KiB): encoding \(milliseconds(binaryEncode)), decoding \(milliseconds(binaryDecode)).")
        }

        if parts.contains("instances"), let postgres {
            try await runInstancesBenchmark(store: postgres, rows: changes, folder: folder)
        }

        if parts.contains("client") {
            try await runClientBenchmarks(port: port, count: count, changes: changes, schema: schema, client: client, token: token)
        }

        if parts.contains("requests") {
        let smallBody = #"{"requests":[{"table":"Clients","where":"Id = :id","parameters":{"id":{"integer":4242}}}]}"#
        let answer = try await client.post("/v2/DataService/GetData", body: Data(smallBody.utf8), token: token, accept: RowStream.contentType)
        let relata = try Wrk.run(port: port, path: "/v2/DataService/GetData", body: smallBody, token: token, accept: RowStream.contentType)
        let bare = try await withServer(bareServer(answer: answer)) { barePort in
            try Wrk.run(port: barePort, path: "/v2/DataService/GetData", body: smallBody, token: token, accept: RowStream.contentType)
        }

        // A small UpdateData: one new note, its row rule run by the server; the same body each
        // time (no apply id), so every request is a new apply that stores a row.
        let applyBody = String(decoding: try DeltaJSON.encode([try NoteTable.newNoteDelta()]), as: UTF8.self)
        let applyAnswer = try await client.post("/v2/DataService/UpdateData", body: Data(applyBody.utf8), token: token)
        let notesBefore = try database.read { try storage.loadTable("Notes", in: $0).rowCount }
        let applies = try Wrk.run(port: port, path: "/v2/DataService/UpdateData", body: applyBody, token: token, accept: "application/json")
        let stored = try database.read { try storage.loadTable("Notes", in: $0).rowCount } - notesBefore
        let bareApplies = try await withServer(bareServer(answer: applyAnswer)) { barePort in
            try Wrk.run(port: barePort, path: "/v2/DataService/UpdateData", body: applyBody, token: token, accept: "application/json")
        }

        // The floor: the same two requests' work done directly on the same file (SQLite only).
        let floors: (read: Wrk.Result, apply: Wrk.Result)? = if let sqlite = store as? SQLiteBenchStore {
            try await withServer(floorServer(path: sqlite.path, getDataAnswer: answer, applyAnswer: applyAnswer)) { floorPort in
                (try Wrk.run(port: floorPort, path: "/v2/DataService/GetData", body: smallBody, token: token, accept: RowStream.contentType),
                 try Wrk.run(port: floorPort, path: "/v2/DataService/UpdateData", body: applyBody, token: token, accept: "application/json"))
            }
        } else {
            nil
        }

        print("")
        print("| 32 clients (wrk, 10 s) | requests/s | p50 | p99 | server CPU a request |")
        print("|---|---|---|---|---|")
        print("| relata serve: GetData of one row by key | \(relata.requestsPerSecond) | \(relata.p50) | \(relata.p99) | \(relata.cpuPerRequest) |")
        print("| bare Hummingbird handler, same answer bytes | \(bare.requestsPerSecond) | \(bare.p50) | \(bare.p99) | \(bare.cpuPerRequest) |")
        if let read = floors?.read {
            print("| floor: the request decoded, the row read by key on a reader thread, same bytes | \(read.requestsPerSecond) | \(read.p50) | \(read.p99) | \(read.cpuPerRequest) |")
        }
        print("| relata serve: UpdateData of one new row, one row rule (\(stored) rows stored) | \(applies.requestsPerSecond) | \(applies.p50) | \(applies.p99) | \(applies.cpuPerRequest) |")
        print("| bare Hummingbird handler, same answer bytes | \(bareApplies.requestsPerSecond) | \(bareApplies.p50) | \(bareApplies.p99) | \(bareApplies.cpuPerRequest) |")
        if let apply = floors?.apply {
            print("| floor: the delta parsed, the row inserted in a transaction on the writer's thread, same bytes | \(apply.requestsPerSecond) | \(apply.p50) | \(apply.p99) | \(apply.cpuPerRequest) |")
        }
        if let r = Double(relata.requestsPerSecond), let b = Double(bare.requestsPerSecond) {
            print("")
            print("Relata ÷ bare throughput, GetData: \(percent(r / b))")
        }
        }
    }
}

/// The CPU time the process has used: on a machine whose cores are shared (steal time), a steadier
/// measure of work done than the wall clock.
func processCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// The page faults the process has taken so far that read nothing from disk: memory touched for
/// the first time since the system gave it to the process.
func processMinorFaults() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_minflt
}

/// A step of a long benchmark, on standard error.
func progress(_ message: String) {
    FileHandle.standardError.write(Data("… \(message)\n".utf8))
}

func percent(_ fraction: Double) -> String { String(format: "%.0f%%", fraction * 100) }

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

nonisolated(nonsending) func measureAsync(repetitions: Int, _ body: nonisolated(nonsending) () async throws -> Void) async rethrows -> Double {
    var times: [Double] = []
    for _ in 0..<repetitions {
        let start = ContinuousClock.now
        try await body()
        times.append((ContinuousClock.now - start).seconds)
    }
    return times.sorted()[times.count / 2]
}

/// The quickest of `repetitions` runs, in seconds: a floor's own time, with the machine's noise
/// (other work, a slow first run) left out as far as runs can leave it out.
nonisolated(nonsending) func quickestAsync(repetitions: Int, _ body: nonisolated(nonsending) () async throws -> Void) async rethrows -> Double {
    var quickest = Double.infinity
    for _ in 0..<max(repetitions, 1) {
        let start = ContinuousClock.now
        try await body()
        quickest = min(quickest, (ContinuousClock.now - start).seconds)
    }
    return quickest
}

/// The table of the small-apply benchmark: a note, a row rule that checks it.
enum NoteTable {
    static let fields = [FieldDefinition("NoteId", .autoInc, primaryKey: true), FieldDefinition("Text", .string, size: 200)]
    static let rules = "function beforePost(row) { if (!row.Text) fail('a note needs text'); }"

    /// A delta adding one note, as a client sends it.
    static func newNoteDelta() throws -> Delta {
        let table = try DataTable(name: "Notes", fields: fields)
        _ = try table.addNewRow(values: ["Text": "a note from the benchmark"])
        return try table.makeDelta()
    }
}

/// The table of the apply benchmark and its rule.
enum ItemTable {
    static let fields = [
        FieldDefinition("ItemId", .integer, primaryKey: true), FieldDefinition("Name", .string, size: 40),
        FieldDefinition("Quantity", .integer), FieldDefinition("UnitPrice", .float),
    ]
    static let rules = """
        function beforeUpdate(row, old) {
            if (row.Quantity <= 0) fail('Quantity must be positive');
            if (row.UnitPrice < old.UnitPrice / 2) fail('the price fell by more than half');
        }
        """

    /// The client benchmark's table: the same row rule, and a delta rule the client validates with.
    static let linesRules = rules + """

        function beforeProcessDeltaChange(delta, change) {
            if (change.newValues.Quantity > 100000) fail('at most 100000 per line');
        }
        """

    /// The edit every benchmark makes: each row's quantity one more.
    static func incrementQuantities(of table: DataTable) throws {
        for row in table.rows { try row.setValue(.integer((row["Quantity"].integerValue ?? 0) + 1), forKey: "Quantity") }
    }

    static func table(_ count: Int, name: String = "Items") throws -> DataTable {
        let table = try DataTable(name: name, fields: fields)
        try table.loadRows((0..<count).lazy.map { index -> [Value] in
            let price = Double(index % 1000) / 10 + 1
            return [.integer(Int64(index + 1)), .string("Item \(index + 1)"), .integer(Int64(index % 50 + 1)), .double(price)]
        })
        return table
    }
}

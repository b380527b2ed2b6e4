// Side-by-side benchmarks of Relata's DataTable against SQLite in memory (the
// users' usual alternative) and a plain Swift array of structs (the floor).
// Ratios are Relata's time divided by the other's: below 1 means Relata is faster.
import Foundation
import Relata


/// Everything runs inside a function: top-level variables of main.swift are
/// main-actor globals, and touching them from the measured closures would add
/// isolation checks to every iteration.
func runCoreBenchmarks(count: Int) throws {
    print("Relata core benchmarks — \(count) rows × 6 fields (integer key, two strings, double, date, bool)")

    let dataset = Dataset(count: count)

    // Load
    var table: DataTable! = nil
    let heapBeforeTable = heapBytesInUse()
    let relataLoad = try measure(repetitions: 3) {
        table = nil
        let fresh = try DataTable(name: "Clients", fields: Dataset.fields)
        try fresh.loadRows(dataset.relataRows)
        table = fresh
    }
    let relataBytes = heapBytesInUse() - heapBeforeTable

    var sqlite: SQLiteTable! = nil
    let sqliteBefore = SQLiteTable.memoryUsed
    let sqliteLoad = measure(repetitions: 3) {
        sqlite = nil
        let fresh = SQLiteTable()
        fresh.load(dataset.records)
        sqlite = fresh
    }
    let sqliteBytes = SQLiteTable.memoryUsed - sqliteBefore

    var array: [ClientRecord] = []
    let heapBeforeArray = heapBytesInUse()
    let arrayLoad = measure(repetitions: 3) {
        array = []
        var fresh: [ClientRecord] = []
        fresh.reserveCapacity(count)
        for record in dataset.records { fresh.append(record) }
        array = fresh
    }
    let arrayBytes = heapBytesInUse() - heapBeforeArray

    // Filter
    let expression = "Balance > 5000 AND Active = TRUE"
    var relataMatches = 0, sqliteMatches = 0, arrayMatches = 0
    let relataFilter = try measure { relataMatches = try table.rows(where: expression).count }
    let sqliteFilter = measure { sqliteMatches = sqlite.ids("SELECT Id FROM Clients WHERE Balance > 5000 AND Active = 1").count }
    let arrayFilter = measure { arrayMatches = array.filter { $0.balance > 5000 && $0.active }.count }
    precondition(relataMatches == sqliteMatches && sqliteMatches == arrayMatches, "the three filters disagree")

    // Sort by a string and by a number
    var firstName = ""
    let relataSortString = try measure { firstName = try table.rows(sortedBy: "Name")[0]["Name"].text }
    let sqliteSortString = measure { _ = sqlite.ids("SELECT Id FROM Clients ORDER BY Name") }
    let arraySortString = measure { _ = array.sorted { $0.name < $1.name } }
    let relataSortNumber = try measure { _ = try table.rows(sortedBy: "Balance", ascending: false) }
    let sqliteSortNumber = measure { _ = sqlite.ids("SELECT Id FROM Clients ORDER BY Balance DESC") }
    let arraySortNumber = measure { _ = array.sorted { $0.balance > $1.balance } }

    // Memory
    let raw = dataset.rawPayloadBytes
    func perRow(_ bytes: Int) -> String { String(format: "%.0f B", Double(bytes) / Double(count)) }

    print("")
    print("| operation | Relata | SQLite in memory | Swift array | Relata ÷ SQLite | Relata ÷ array |")
    print("|---|---|---|---|---|---|")
    for (name, r, s, a) in [
        ("load", relataLoad, sqliteLoad, arrayLoad),
        ("filter `\(expression)` (\(relataMatches) rows)", relataFilter, sqliteFilter, arrayFilter),
        ("sort by Name (string)", relataSortString, sqliteSortString, arraySortString),
        ("sort by Balance (double) descending", relataSortNumber, sqliteSortNumber, arraySortNumber),
    ] {
        print("| \(name) | \(milliseconds(r)) | \(milliseconds(s)) | \(milliseconds(a)) | \(ratio(r, s)) | \(ratio(r, a)) |")
    }
    print("| memory per row (raw payload \(perRow(raw))) | \(perRow(relataBytes)) | \(perRow(sqliteBytes)) | \(perRow(arrayBytes)) | \(ratio(Double(relataBytes), Double(sqliteBytes))) | \(ratio(Double(relataBytes), Double(arrayBytes))) |")
    print("")
    print(String(format: "Relata memory ÷ raw payload: %.2f×", Double(relataBytes) / Double(raw)))
    _ = firstName
}

let arguments = Array(CommandLine.arguments.dropFirst())
let suite = arguments.first { Int($0) == nil } ?? "core"
let rowCount = arguments.compactMap(Int.init).first ?? 1_000_000
switch suite {
case "core": try runCoreBenchmarks(count: rowCount)
case "rules": try runRuleBenchmarks(count: rowCount)
case "edits": try runEditBenchmarks(count: arguments.compactMap(Int.init).first ?? 100_000)
case "error-cost": try runErrorCost()
case "dasql": try runDASQLBenchmarks(count: rowCount)
case "briefcase": try runBriefcaseBenchmarks(count: rowCount)
case "foreign-keys": try runForeignKeyBenchmarks(count: arguments.compactMap(Int.init).first ?? 100_000)
case "wire": try runWireBenchmarks(count: arguments.compactMap(Int.init).first ?? 100_000)
case "server":
    let parts = Set(arguments.filter { Int($0) == nil }.dropFirst())
    try await runServerBenchmarks(count: rowCount, parts: parts.isEmpty ? ["fetch", "apply", "requests", "client"] : parts)
case "postgres":
    guard let url = ProcessInfo.processInfo.environment["RELATA_POSTGRES_URL"], !url.isEmpty else {
        print("relata-benchmarks postgres needs RELATA_POSTGRES_URL (a server where it may create a database); see Benchmarks/README.md")
        exit(2)
    }
    let parts = Set(arguments.filter { Int($0) == nil }.dropFirst())
    try await runServerBenchmarks(count: rowCount, parts: parts.isEmpty ? ["fetch", "apply", "instances"] : parts, postgresURL: url)
default:
    print("usage: relata-benchmarks [core|rules|edits|briefcase|dasql|error-cost|foreign-keys|wire] [rows]")
    print("       relata-benchmarks server [rows] [fetch] [apply] [client] [requests]")
    print("       RELATA_POSTGRES_URL=postgres://… relata-benchmarks postgres [rows] [fetch] [apply] [instances] [client] [requests]")
    exit(2)
}

// DA SQL's in-memory engine side by side with SQLite in memory, on the same data and the
// same query text: a filter, a join of the 1,000,000-row table with a 10,000-row one, and
// grouped aggregates. Both hand back every value of the answer (Relata as a DataTable,
// SQLite read column by column into Swift values).
import CBenchmarkSupport
import Foundation
import Relata

func runDASQLBenchmarks(count: Int) throws {
    let cities = 10_000
    print("DA SQL in memory vs SQLite in memory — Clients: \(count) rows, Cities: \(cities) rows")
    let dataset = Dataset(count: count)
    let clients = try DataTable(name: "Clients", fields: Dataset.fields)
    try clients.loadRows(dataset.relataRows)
    let cityTable = try DataTable(name: "Cities", fields: [
        FieldDefinition("CityId", .largeInt, primaryKey: true), FieldDefinition("Name", .string), FieldDefinition("Country", .string),
    ])
    let countries = ["NO", "LV", "PT", "KE", "JP", "EG", "US", "DE", "IN", "VN"]
    try cityTable.loadRows((0..<cities).lazy.map { [.integer(Int64($0)), .string("City \($0)"), .string(countries[$0 % countries.count])] })

    let sqlite = SQLiteTable()
    sqlite.load(dataset.records)
    sqlite.exec("CREATE TABLE Cities (CityId INTEGER PRIMARY KEY, Name TEXT, Country TEXT)")
    sqlite.exec("BEGIN")
    for city in 0..<cities { sqlite.exec("INSERT INTO Cities VALUES (\(city), 'City \(city)', '\(countries[city % countries.count])')") }
    sqlite.exec("COMMIT")
    progress("loaded")

    let size = count >= 1_000_000 ? "\(count / 1_000_000)M" : "\(count / 1000)k"
    let queries: [(String, String)] = [
        ("filter", "SELECT Id, Name FROM Clients WHERE Balance > 5000 AND Active = TRUE"),
        ("join \(size) × 10k, count", "SELECT COUNT(*) FROM Clients c JOIN Cities ci ON ci.CityId = c.Id % 10000"),
        ("join \(size) × 10k, filtered on the small side", "SELECT c.Id, ci.Name FROM Clients c JOIN Cities ci ON ci.CityId = c.Id % 10000 WHERE ci.Country = 'NO'"),
        ("group by (20 groups), aggregates", "SELECT City, COUNT(*), SUM(Balance), MAX(Name) FROM Clients GROUP BY City"),
        ("group by (10,000 groups) over the join", "SELECT ci.Name, COUNT(*), AVG(c.Balance) FROM Clients c JOIN Cities ci ON ci.CityId = c.Id % 10000 GROUP BY ci.Name"),
    ]
    print("")
    print("| query | DA SQL in memory | SQLite in memory | DA SQL ÷ SQLite | rows |")
    print("|---|---|---|---|---|")
    for (name, text) in queries {
        let query = try DASQLQuery(text)
        var relataRows = 0, sqliteRows = 0
        let relata = try measure(repetitions: 3) { relataRows = try DataTable(query: query, over: [clients, cityTable]).rowCount }
        let native = measure(repetitions: 3) { sqliteRows = sqlite.rows(text) }
        precondition(relataRows == sqliteRows, "\(name): \(relataRows) rows vs SQLite's \(sqliteRows)")
        print("| \(name) — `\(text)` | \(milliseconds(relata)) | \(milliseconds(native)) | \(ratio(relata, native)) | \(relataRows) |")
    }
}

extension SQLiteTable {
    /// Runs a query and reads every value of its answer into Swift values; the number of rows.
    func rows(_ sql: String) -> Int {
        var rows: [[Value]] = []
        withStatement(sql) { statement in
            let columns = sqlite3_column_count(statement)
            while sqlite3_step(statement) == SQLITE_ROW {
                rows.append((0..<columns).map { column in
                    switch sqlite3_column_type(statement, column) {
                    case SQLITE_INTEGER: .integer(sqlite3_column_int64(statement, column))
                    case SQLITE_FLOAT: .double(sqlite3_column_double(statement, column))
                    case SQLITE_TEXT: .string(String(cString: sqlite3_column_text(statement, column)))
                    default: .null
                    }
                })
            }
        }
        return rows.count
    }
}

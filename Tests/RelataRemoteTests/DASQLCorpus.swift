import Foundation
import Relata
import RelataTestSupport

/// The data and queries of the DA SQL differential test: random tables full of what SQL
/// databases disagree on (NULLs, duplicates, case and accents, integers next to floats and
/// decimals, dates, an integer near the overflow) and queries generated over them from a seed.
enum DASQLCorpus {
    /// The same seed, the same corpus, on every machine.
    struct Random {
        private var generator: SeededGenerator
        init(seed: UInt64) { generator = SeededGenerator(seed: seed) }

        mutating func next() -> UInt64 { generator.next() }

        mutating func int(_ range: ClosedRange<Int>) -> Int {
            range.lowerBound + Int(next() % UInt64(range.count))
        }

        mutating func chance(_ percent: Int) -> Bool { int(1...100) <= percent }

        mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }
    }

    // MARK: Tables

    static let schema: SchemaDefinition = {
        let a = TableDefinition(name: "A", fields: [
            FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("K", .integer), FieldDefinition("I", .largeInt),
            FieldDefinition("F", .float), FieldDefinition("S", .string, size: 20), FieldDefinition("D", .decimal),
            FieldDefinition("T", .dateTime), FieldDefinition("B", .boolean),
        ])
        let b = TableDefinition(name: "B", fields: [
            FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("Name", .string, size: 20),
            FieldDefinition("I", .largeInt), FieldDefinition("F", .float),
        ])
        let e = TableDefinition(name: "E", fields: [
            FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("Name", .string, size: 20), FieldDefinition("I", .largeInt),
        ])
        return try! SchemaDefinition(name: "Random", tables: [a, b, e])
    }()

    static let strings = ["a", "A", "b", "ab", "Ab", "é", "É", "e\u{301}", "", " a", "a%", "x_y", "Zoë", "😀", "B"]

    /// The random tables, filled from `seed`.
    static func tables(seed: UInt64) throws -> [DataTable] {
        var random = Random(seed: seed)
        let a = try DataTable(name: "A", fields: schema.table(named: "A")!.fields)
        let b = try DataTable(name: "B", fields: schema.table(named: "B")!.fields)
        let e = try DataTable(name: "E", fields: schema.table(named: "E")!.fields)
        func maybe(_ value: Value, nulls: Int = 15) -> Value { random.chance(nulls) ? .null : value }
        for id in 1...8 {
            try b.loadRows([[.integer(Int64(id)), maybe(.string(random.pick(strings)), nulls: 10),
                             maybe(.integer(Int64(random.int(-3...3)))), maybe(.double(random.pick([0.5, 1.0, 2.25, -1.5])))]])
        }
        let day = Date(timeIntervalSince1970: 1_704_067_200)   // 2024-01-01T00:00:00Z
        for id in 1...40 {
            let integer: Int64 = random.chance(4) ? 4_611_686_018_427_387_904 : Int64(random.int(-3...3))
            // Id, K, I, F, S, D, T, B
            try a.loadRows([[
                .integer(Int64(id)),
                maybe(.integer(Int64(random.int(0...9))), nulls: 10),
                maybe(.integer(integer)),
                maybe(.double(random.pick([-1.5, 0, 0.5, 1.0, 2.25, 3.0, 1e15]))),
                maybe(.string(random.pick(strings))),
                maybe(.decimal(Decimal(string: random.pick(["1.0", "1.00", "2.5", "-0.1", "10", "0.3"]))!)),
                maybe(.date(day.addingTimeInterval(Double(random.int(0...90)) * 86_400 + Double(random.pick([0, 3_600, 43_200]))))),
                maybe(.boolean(random.chance(50))),
            ]])
        }
        return [a, b, e]
    }

    // MARK: Queries

    /// A generated query and its parameters.
    struct Query: CustomStringConvertible {
        var text: String
        var parameters: [String: Value] = [:]
        /// Whether the rows come in a defined order (ORDER BY every column).
        var ordered = false
        var description: String { parameters.isEmpty ? text : "\(text)  \(parameters.keys.sorted().map { ":\($0)=\(parameters[$0]!)" }.joined(separator: " "))" }
    }

    static func queries(count: Int, seed: UInt64) -> [Query] {
        var random = Random(seed: seed)
        return (0..<count).map { _ in query(&random) }
    }

    private static func query(_ random: inout Random) -> Query {
        var parameters: [String: Value] = [:]
        let join = random.pick(["", "", " JOIN B ON B.Id = A.K", " LEFT JOIN B ON B.Id = A.K", " LEFT JOIN B ON B.I = A.I AND B.F > 0"])
        let joined = !join.isEmpty
        var conditions: [String] = []
        for _ in 0..<random.int(0...2) { conditions.append(condition(&random, joined: joined, parameters: &parameters)) }
        var whereClause = ""
        if !conditions.isEmpty {
            whereClause = " WHERE " + conditions.joined(separator: random.pick([" AND ", " OR "]))
            if random.chance(15) { whereClause = " WHERE NOT (" + conditions.joined(separator: " AND ") + ")" }
        }
        if random.chance(12) {
            // An empty table: aggregates of no rows.
            let columns = ["COUNT(*)", "SUM(E.I)", "MAX(E.Name)", "AVG(E.I)", "COUNT(E.Name)"].shuffledPrefix(&random, 1...3)
            return Query(text: "SELECT \(columns.joined(separator: ", ")) FROM E" + (random.chance(50) ? " WHERE E.I > 0" : ""))
        }
        if random.chance(35) {
            // Groups.
            let groups = ["A.I", "A.S", "A.B", "A.K", "A.D", "YEAR(A.T)", "A.F"] + (joined ? ["B.Name"] : [])
            let group = random.pick(groups)
            var aggregates = ["COUNT(*)", "SUM(A.I)", "AVG(A.I)", "MIN(A.S)", "MAX(A.F)", "COUNT(DISTINCT A.S)", "SUM(A.F)", "MIN(A.T)",
                              "MAX(A.D)", "SUM(A.D)", "COUNT(A.K)", "SUM(DISTINCT A.I)"].shuffledPrefix(&random, 1...3)
            aggregates = aggregates.enumerated().map { "\($1) AS G\($0)" }
            var text = "SELECT \(group) AS Grp, \(aggregates.joined(separator: ", ")) FROM A\(join)\(whereClause) GROUP BY \(group)"
            if random.chance(30) { text += " HAVING COUNT(*) > \(random.int(0...2))" }
            var query = Query(text: text, parameters: parameters)
            if random.chance(50) {
                query.text += " ORDER BY " + (1...(aggregates.count + 1)).map { "\($0)\(random.chance(30) ? " DESC" : "")" }.joined(separator: ", ")
                query.ordered = true
                if random.chance(50) { query.text += " LIMIT \(random.int(0...4))" + (random.chance(50) ? " OFFSET \(random.int(0...3))" : "") }
            }
            return query
        }
        var columns = ["A.Id", "A.I", "A.F", "A.S", "A.D", "A.T", "A.B", "A.K", "A.I + 1 AS X", "A.S || '!' AS Y", "A.F * 2 AS Z",
                       "A.I > 0 AS P", "COALESCE(A.I, A.K) AS C", "ABS(A.F) AS AF", "A.F / 2 AS H", "MONTH(A.T) AS M"]
        if joined { columns += ["B.Name", "B.I AS BI"] }
        let distinct = random.chance(20)
        let chosen = columns.shuffledPrefix(&random, 1...4)
        var query = Query(text: "SELECT \(distinct ? "DISTINCT " : "")\(chosen.joined(separator: ", ")) FROM A\(join)\(whereClause)",
                          parameters: parameters)
        if random.chance(50) {
            query.text += " ORDER BY " + (1...chosen.count).map { "\($0)\(random.chance(30) ? " DESC" : "")" }.joined(separator: ", ")
            // Ordered by every column, rows that tie are alike: the order is defined, and so is what LIMIT keeps.
            query.ordered = true
            if random.chance(50) {
                query.text += " LIMIT \(random.int(0...6))" + (random.chance(50) ? " OFFSET \(random.int(0...5))" : "")
            }
        }
        return query
    }

    private static func condition(_ random: inout Random, joined: Bool, parameters: inout [String: Value]) -> String {
        let op = random.pick(["=", "<>", "<", "<=", ">", ">="])
        var choices: [String] = [
            "A.I \(op) \(random.int(-2...2))", "A.F \(op) \(random.pick(["0.5", "1", "2.0", "-1"]))", "A.I \(op) A.K",
            "A.S \(op) '\(random.pick(strings))'", "A.S IS NULL", "A.I IS NOT NULL", "A.B", "NOT A.B", "A.B = FALSE",
            "A.I IN (1, 2, NULL)", "A.I NOT IN (0, 1)", "A.I NOT IN (0, NULL)", "A.S IN ('a', 'A', 'é')",
            "A.F BETWEEN 0 AND 2", "A.I NOT BETWEEN -1 AND 1", "A.S BETWEEN 'A' AND 'b'",
            "A.T >= '2024-02-01'", "A.T < '2024-03-01T12:00:00Z'", "YEAR(A.T) = 2024", "MONTH(A.T) \(op) 2", "DAY(A.T) = 1",
            "A.D \(op) 1", "A.D = 1.0", "A.D > A.F",
            "A.I + 1 \(op) 2", "A.I * 2 = A.K", "A.I - A.K > 0", "A.F / 2 > 0.5", "A.I / 2 = 1", "A.I % 2 = 0",
            "ABS(A.I) = 2", "COALESCE(A.I, 0) = 0", "-A.I > 1", "A.S || 'x' = 'ax'",
            "A.S LIKE 'a%'", "A.S LIKE '_'", "A.S NOT LIKE '%b%'", "UPPER(A.S) = 'AB'", "LENGTH(A.S) = 2",
            "A.I = A.F", "A.F > A.I",
            "A.S = 1", "A.I = 'a'",
            "A.K IN (SELECT Id FROM B WHERE B.I > 0)", "A.K NOT IN (SELECT B.I FROM B)", "A.I IN (SELECT B.I FROM B WHERE B.Id = A.K)",
            "EXISTS (SELECT 1 FROM B WHERE B.Id = A.K AND B.F > 1)", "NOT EXISTS (SELECT Id FROM B WHERE B.Id = A.K)",
            "A.I = :i", "A.S = :s", "A.F > :f", "A.T > :t", "A.I IN (:i, 3)",
        ]
        if joined { choices += ["B.Name = A.S", "B.I \(op) A.I", "B.Name IS NULL", "B.F + A.F > 2"] }
        let chosen = random.pick(choices)
        if chosen.contains(":i") { parameters["i"] = random.pick([.integer(1), .integer(-1), .double(2.0), .double(1.5), .null, .string("1")]) }
        if chosen.contains(":s") { parameters["s"] = random.pick([.string("a"), .string("é"), .null]) }
        if chosen.contains(":f") { parameters["f"] = random.pick([.double(0.5), .integer(1), .decimal(Decimal(string: "0.5")!)]) }
        if chosen.contains(":t") { parameters["t"] = random.pick([.date(Date(timeIntervalSince1970: 1_706_745_600)), .string("2024-02-15")]) }
        return chosen
    }

    // MARK: Answers

    /// An answer as comparable text: each value as its kind and exact value (numbers that are
    /// equal compare equal, `1.0` and `1.00` alike), rows sorted unless the order is defined.
    static func canonical(_ rows: [[Value]], ordered: Bool) -> [String] {
        let lines = rows.map { row in row.map(canonical).joined(separator: " | ") }
        return ordered ? lines : lines.sorted()
    }

    static func canonical(_ value: Value) -> String {
        switch value {
        case .null: return "NULL"
        case .decimal(let decimal): return "decimal \(NSDecimalNumber(decimal: decimal).stringValue)"
        case .string(let text): return "string '\(text.unicodeScalars.map { String($0) }.joined())' \(Array(text.utf8))"
        default: return "\(value.kindName) \(value)"
        }
    }
}

extension Array {
    /// Between `range` of the elements, in a random order.
    func shuffledPrefix(_ random: inout DASQLCorpus.Random, _ range: ClosedRange<Int>) -> [Element] {
        var items = self
        for index in items.indices.reversed() where index > 0 {
            items.swapAt(index, random.int(0...index))
        }
        return Array(items.prefix(Swift.min(count, random.int(range))))
    }
}

import Foundation
import Relata
import RelataTestSupport
import Testing
@testable import RelataScript

/// One event contract: random tables (with field names such as `get`, `set`, `i`,
/// `constructor`, `__proto__`, names with spaces and non-ASCII), random rules and
/// random edits give the same verdicts and values row by row as in a batch.
@Suite struct BatchDifferentialTests {

    static let names = ["get", "set", "i", "constructor", "__proto__", "toString", "valueOf", "then", "length", "c0", "w0",
                        "hasOwnProperty", "name with space", "Größe", "数量", "Qty", "Price", "Flag", "When", "Note", "relata", "old"]
    static let types: [DataType] = [.integer, .float, .boolean, .string, .dateTime]

    struct Case {
        var fields: [FieldDefinition]
        var csv: String
        var script: String
        var edits: [Edit]
    }

    enum Edit {
        case update(key: Int, values: [String: Value])
        case insert(key: Int, values: [String: Value])
        case remove(key: Int)
    }

    static func quoted(_ text: String) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: [text]), as: UTF8.self).dropFirst().dropLast().description
    }

    static func randomValue(_ type: DataType, using random: inout SeededGenerator) -> Value {
        if Int.random(in: 0..<6, using: &random) == 0 { return .null }
        switch type {
        case .integer: return .integer(Int64.random(in: -20...20, using: &random))
        case .float: return .double(Double(Int.random(in: -400...400, using: &random)) / 8)
        case .boolean: return .boolean(Bool.random(using: &random))
        case .dateTime: return .date(Date(timeIntervalSince1970: Double(Int.random(in: 0...2_000_000, using: &random)) * 1000))
        default: return .string(["a", "x", "set", "", "Größe", "long text"].randomElement(using: &random)!)
        }
    }

    static func csvCell(_ value: Value) -> String {
        switch value {
        case .null: return ""
        case .string(let text): return "\"\(text.replacingOccurrences(of: "\"", with: "\"\""))\""
        case .date(let date): return ISO8601DateFormatter().string(from: date)
        case .boolean(let flag): return flag ? "true" : "false"
        default: return value.description
        }
    }

    /// A condition on one field that holds for some values of its type.
    static func condition(on field: FieldDefinition, in object: String, using random: inout SeededGenerator) -> String {
        let access = "\(object)[\(quoted(field.name))]"
        switch field.type {
        case .integer, .float: return "\(access) !== null && \(access) > \(Int.random(in: -10...10, using: &random))"
        case .boolean: return "\(access) === \(Bool.random(using: &random))"
        case .dateTime: return "\(access) !== null && \(access).getTime() > \(Int.random(in: 0...2_000_000, using: &random)) * 1000"
        default: return "\(access) === \(quoted(["x", "set", "", "Größe"].randomElement(using: &random)!))"
        }
    }

    static func makeCase(seed: UInt64) -> Case {
        var random = SeededGenerator(seed: seed)
        var fields = [FieldDefinition("Id", .integer, primaryKey: true)]
        for name in names.shuffled(using: &random).prefix(Int.random(in: 2...5, using: &random)) {
            fields.append(FieldDefinition(name, types.randomElement(using: &random)!, size: 0))
        }
        let data = fields.dropFirst()
        var lines = [fields.map { quoted($0.name).replacingOccurrences(of: "\\", with: "") }.joined(separator: ",")]
        for key in 1...12 {
            lines.append((["\(key)"] + data.map { csvCell(randomValue($0.type, using: &random)) }).joined(separator: ","))
        }
        func clause(_ object: String) -> String { condition(on: data.randomElement(using: &random)!, in: object, using: &random) }
        var script = ""
        for event in ["beforePost", "beforeInsert", "beforeUpdate", "beforeDelete"] where Bool.random(using: &random) {
            var body: [String] = []
            for n in 0..<Int.random(in: 1...3, using: &random) {
                let message = "\(event) \(n): ' + JSON.stringify(row[\(quoted(data.randomElement(using: &random)!.name))]) + '"
                body.append("if (\(clause("row"))) fail('\(message)');")
            }
            if event == "beforeUpdate" { body.append("if (\(clause("old"))) fail('old ' + Object.keys(old).join('|'));") }
            if Int.random(in: 0..<3, using: &random) == 0 {
                body.append("if (Object.keys(row).join('|') !== \(quoted(fields.map(\.name).joined(separator: "|")))) fail('keys ' + Object.keys(row).join('|'));")
            }
            if event == "beforePost", let text = data.first(where: { $0.type == .string }), Bool.random(using: &random) {
                body.append("if (\(clause("row"))) row[\(quoted(text.name))] = 'set by rule';")
            }
            if event != "beforeDelete", let target = data.randomElement(using: &random), Int.random(in: 0..<3, using: &random) == 0 {
                // A write of the wrong type or of a value no site stores (NaN, an infinity, NUL in text):
                // both paths must refuse it in the same words; -0 is stored as 0 by both.
                let wrong = target.type == .string ? ["new Uint8Array(2)", "'nul\\u0000here'"].randomElement(using: &random)!
                    : ["'many'", "{}", "true", "1.5", "NaN", "-Infinity", "-0"].randomElement(using: &random)!
                body.append("if (\(clause("row"))) row[\(quoted(target.name))] = \(wrong);")
            }
            script += "function \(event)(row, old) {\n    " + body.joined(separator: "\n    ") + "\n}\n"
        }
        var edits: [Edit] = []
        for key in Array(1...12).shuffled(using: &random).prefix(9) {
            switch Int.random(in: 0..<3, using: &random) {
            case 0: edits.append(.remove(key: key))
            default:
                let field = data.randomElement(using: &random)!
                edits.append(.update(key: key, values: [field.name: randomValue(field.type, using: &random)]))
            }
        }
        for key in 13...15 {
            edits.append(.insert(key: key, values: Dictionary(uniqueKeysWithValues: data.map { ($0.name, randomValue($0.type, using: &random)) })))
        }
        return Case(fields: fields, csv: lines.joined(separator: "\n") + "\n", script: script, edits: edits)
    }

    /// Verdicts by row key: nil for a row the rules accepted, else the failure (its message when `fail()` said it).
    static func rowByRow(_ testCase: Case) throws -> (verdicts: [Int: String], values: [Int: [Value]]) {
        let (adapter, table) = try makeTable(testCase)
        var verdicts: [Int: String] = [:]
        for edit in testCase.edits {
            do {
                switch edit {
                case .update(let key, let values): try table.row(forPrimaryKey: [.integer(Int64(key))])!.setValues(values)
                case .insert(let key, let values): try table.addNewRow(values: values.merging(["Id": .integer(Int64(key))]) { a, _ in a })
                case .remove(let key): try table.removeRow(table.row(forPrimaryKey: [.integer(Int64(key))])!)
                }
            } catch let error as ScriptError {
                verdicts[edit.key] = verdict(error)
            }
        }
        _ = adapter
        return (verdicts, values(of: table))
    }

    static func batch(_ testCase: Case) throws -> (verdicts: [Int: String], values: [Int: [Value]]) {
        let (adapter, table) = try makeTable(testCase)
        try table.withoutRules {
            for edit in testCase.edits {
                switch edit {
                case .update(let key, let values): try table.row(forPrimaryKey: [.integer(Int64(key))])!.setValues(values)
                case .insert(let key, let values): try table.addNewRow(values: values.merging(["Id": .integer(Int64(key))]) { a, _ in a })
                case .remove(let key): try table.removeRow(table.row(forPrimaryKey: [.integer(Int64(key))])!)
                }
            }
        }
        var verdicts: [Int: String] = [:]
        for violation in try adapter.validateChanges(for: table) {
            let key = Int(violation.row.value(forKeyIfPresent: "Id")?.integerValue ?? -1)
            verdicts[key] = verdict(violation.error)
        }
        // Refused changes are undone, as row by row they never happened.
        let all = table.rows + table.deletedRows
        for row in all where verdicts[Int(row["Id"].integerValue ?? -1)] != nil { try table.cancelChange(for: row) }
        return (verdicts, values(of: table))
    }

    static func verdict(_ error: ScriptError) -> String {
        error.kind == .ruleFailed ? "fail: \(error.message)" : "error: \(error.message)"
    }

    static func makeTable(_ testCase: Case) throws -> (LocalDataAdapter, DataTable) {
        let adapter = try LocalDataAdapter(engine: ScriptEngine(timeLimit: .seconds(2)))
        let table = try adapter.addTable(name: "Random", fields: testCase.fields, csv: testCase.csv,
                                         script: RuleScript(testCase.script, fileName: "Random.js"))
        return (adapter, table)
    }

    static func values(of table: DataTable) -> [Int: [Value]] {
        Dictionary(uniqueKeysWithValues: table.rows.map { row in
            (Int(row["Id"].integerValue ?? -1), table.fields.map { row[$0.name] })
        })
    }

    @Test(arguments: 0..<60)
    func rowByRowAndBatchAgree(seed: Int) throws {
        let testCase = Self.makeCase(seed: UInt64(seed) &* 7919 &+ 17)
        let single = try Self.rowByRow(testCase)
        let batched = try Self.batch(testCase)
        #expect(single.verdicts == batched.verdicts, "seed \(seed)\n\(testCase.script)")
        #expect(single.values == batched.values, "seed \(seed)\n\(testCase.script)")
    }

    @Test func theCaseGeneratorCoversTheHardNames() {
        let used = Set((0..<60).flatMap { Self.makeCase(seed: UInt64($0) &* 7919 &+ 17).fields.map(\.name) })
        for name in ["get", "set", "i", "constructor", "__proto__", "name with space", "Größe"] { #expect(used.contains(name), "\(name)") }
    }
}

extension BatchDifferentialTests.Edit {
    var key: Int {
        switch self {
        case .update(let key, _), .insert(let key, _), .remove(let key): return key
        }
    }
}

extension DataTableRow {
    func value(forKeyIfPresent key: String) -> Value? { try? value(forKey: key) }
}

extension BatchDifferentialTests {
    /// The comparison means something only if the rules refuse some edits and accept others.
    @Test func theGeneratedRulesRefuseSomeEditsAndAcceptOthers() throws {
        var refused = 0, accepted = 0, failures = 0, keyChecks = 0, errors = 0
        for seed in 0..<60 {
            let testCase = Self.makeCase(seed: UInt64(seed) &* 7919 &+ 17)
            let verdicts = try Self.rowByRow(testCase).verdicts
            refused += verdicts.count
            accepted += testCase.edits.count - verdicts.count
            failures += verdicts.values.filter { $0.hasPrefix("fail:") }.count
            keyChecks += verdicts.values.filter { $0.hasPrefix("fail: keys") }.count
            errors += verdicts.values.filter { $0.hasPrefix("error: ") }.count
        }
        print("differential corpus: \(refused) refused, \(accepted) accepted, \(failures) by fail(), \(errors) by a bad write, \(keyChecks) key-list failures")
        #expect(refused > 100 && accepted > 100 && failures > 100 && errors > 5)
        #expect(keyChecks == 0, "Object.keys(row) lists exactly the fields")
    }
}

import ArgumentParser
import Foundation
import Logging
import Relata
import RelataScript
import RelataTools

/// `relata run SCHEMA --edits FILE`: edits through the rules, then an apply; a verdict per edit.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Make edits to a schema's data through its rules, apply them, and print each edit's verdict.",
        discussion: """
            Each edit is made as a user would make it: row rules run (onNewRow, beforePost, \
            beforeInsert/beforeUpdate, beforeDelete), and an edit they refuse leaves the data as it was. \
            Then every pending change is applied (delta and transaction rules run). Each edit is reported \
            as applied, refused (by a row rule or a bad value) or failed (at the apply), with the rule's \
            message and script location, and the row's calculated and lookup values.

            Examples:
              relata run Examples/PCTrade/PCTrade.schema.json --edits Examples/PCTrade/edits/scenario.json
              relata run Examples/PCTrade/PCTrade.schema.json --edits Examples/PCTrade/edits/scenario.json \\
                --no-apply --save-briefcase /tmp/pctrade.briefcase
            """)

    @Argument(help: "The schema file (JSON; see Documentation/Schema.md).")
    var schema: String

    @Option(name: .shortAndLong, help: "A JSON file listing the edits: inserts, updates and deletes.")
    var edits: String

    @Flag(help: "Run the row rules only; leave the changes pending instead of applying them.")
    var noApply = false

    @Option(help: "Save the tables afterwards, pending changes included, to this briefcase file.")
    var saveBriefcase: String?

    @Flag(help: "Let --save-briefcase replace an existing file that is not a briefcase.")
    var force = false

    @Flag(help: "Print the verdicts as JSON.")
    var json = false

    func run() throws {
        var exit: ExitCode?
        try reportingFailures {
            let schema = try Schema(contentsOf: URL(fileURLWithPath: self.schema))
            let edits = try Edit.list(contentsOf: URL(fileURLWithPath: self.edits))
            let adapter = try schema.makeAdapter(logger: Logger(label: "relata.rules"))
            let target = saveBriefcase.map { OutputFile(path: $0, what: "a Relata briefcase", force: force) }
            let report = try EditRun(adapter: adapter, edits: edits, apply: !noApply).report
            if json {
                try Terminal.printJSON(report)
            } else {
                Terminal.print(report.text(schema: schema.description.name))
            }
            exit = ExitStatus.for(report.verdicts.compactMap(\.kind))
            // The report is out before the save: a save that fails loses none of what ran.
            if let target {
                let briefcase = Briefcase()
                for table in adapter.tables { briefcase.addTable(table) }
                briefcase.properties["Schema"] = schema.description.name
                try target.checkWritable(isOurs: Briefcase.isBriefcase(at:))
                do {
                    try briefcase.save(to: target.url, layout: Briefcase.layout(of: target.url))
                } catch let error as RelataError {
                    throw error
                } catch {
                    throw RelataError(.fileFailed, "the briefcase could not be saved: \(OutputFile.reason(error))", location: target.path)
                }
            }
        }
        if let exit { throw exit }
    }
}

/// Edits made through an adapter's rules, then applied; what became of each.
struct EditRun {
    let report: Report

    struct Report: Encodable {
        var verdicts: [EditVerdict]
        var summary: [String: Int]

        func text(schema: String) -> String {
            var lines = ["\(schema): \(verdicts.count) edit\(verdicts.count == 1 ? "" : "s")"]
            for verdict in verdicts { lines += verdict.textLines }
            let order: [EditVerdict.Verdict] = [.applied, .pending, .refused, .failed]
            lines.append(order.compactMap { kind in summary[kind.rawValue].map { "\($0) \(kind.rawValue)" } }.joined(separator: ", "))
            return lines.joined(separator: "\n")
        }
    }

    struct EditVerdict: Encodable {
        enum Verdict: String, Encodable {
            /// Passed the row rules and the apply.
            case applied
            /// Passed the row rules; not applied (`--no-apply`).
            case pending
            /// Refused when made: a row rule failed or a value was wrong.
            case refused
            /// Failed at the apply: a delta or transaction rule, or the update rule.
            case failed
        }
        var index: Int
        var edit: String
        var row: String?
        var verdict: Verdict
        /// Why it did not pass: a rule's refusal, a broken rule, a wrong value or a key (nil when it passed).
        var kind: FailureKind?
        var message: String?
        var location: String?
        var event: String?
        /// The row's calculated and lookup values after the rules.
        var values: [String: JSONValue]?

        var textLines: [String] {
            let mark = verdict == .applied || verdict == .pending ? "✔" : "✘"
            var head = "\(String(index).leftPadded(to: 3)) \(mark) \(edit)"
            if let row { head += " → \(row)" }
            head += "  \(verdict.rawValue)"
            if kind == .ruleError {
                // A broken rule reads differently from a refusal: the rule needs fixing, not the data.
                head += verdict == .refused || verdict == .failed ? ": a rule is broken" : ", but a rule is broken"
                if let event { head += " (error in \(event)" + (location.map { " at \($0)" } ?? "") + ")" }
            } else if verdict == .refused || verdict == .failed {
                if let event { head += " by \(event)" }
                if let location { head += " at \(location)" }
            }
            var lines = [head]
            if let message { lines.append("      \(message)") }
            if let values, !values.isEmpty {
                lines.append("      " + values.keys.sorted().map { "\($0) = \(values[$0]!.shown)" }.joined(separator: ", "))
            }
            return lines
        }
    }

    init(adapter: LocalDataAdapter, edits: [Edit], apply: Bool) throws {
        var aliases: [String: DataTableRow] = [:]
        var verdicts: [EditVerdict] = []
        var madeRows: [(verdict: Int, row: DataTableRow, table: String, changeId: Int)] = []
        let progress = ProgressBar(total: edits.count)
        for (offset, edit) in edits.enumerated() {
            var verdict = EditVerdict(index: offset + 1, edit: edit.summary, verdict: .pending)
            do {
                let row = try adapter.perform(edit, aliases: &aliases)
                verdict.row = row.label
                madeRows.append((verdicts.count, row, row.table.name, row.changeId))
            } catch let error as ScriptError {
                verdict.verdict = .refused
                verdict.kind = FailureKind(error)
                verdict.message = error.message
                verdict.location = error.location
                verdict.event = error.event
            } catch let error as RelataError {
                verdict.verdict = .refused
                verdict.kind = error.code == .constraintViolation ? .constraint : .invalidValue
                verdict.message = "\(error)"
            }
            verdicts.append(verdict)
            progress.advance(edit.summary)
        }
        progress.finish()
        if apply {
            let deltas = try adapter.applyChanges(for: adapter.tables)
            var outcomes: [String: DeltaChange] = [:]
            for delta in deltas { for change in delta.changes { outcomes["\(delta.tableName.lowercased())/\(change.changeId)"] = change } }
            for made in madeRows {
                guard let change = outcomes["\(made.table.lowercased())/\(made.changeId)"] else { continue }
                if change.status == .failed {
                    verdicts[made.verdict].verdict = .failed
                    verdicts[made.verdict].kind = change.failure?.kind ?? .refusal
                    verdicts[made.verdict].message = change.message
                    verdicts[made.verdict].location = change.failure?.location
                    verdicts[made.verdict].event = change.failure?.event
                } else {
                    verdicts[made.verdict].verdict = .applied
                }
            }
        }
        // Values after everything, for rows that are still in their table.
        for made in madeRows {
            let row = made.row
            guard row.isInTable, row.rowState != .deleted else { continue }
            verdicts[made.verdict].row = row.label
            var values: [String: JSONValue] = [:]
            for name in row.table.virtualFieldNames {
                do {
                    values[name] = JSONValue(try row.value(forKey: name))
                } catch {
                    // A calculated field that throws, returns the wrong type or runs away is a broken rule on this edit.
                    values[name] = .null
                    verdicts[made.verdict].kind = verdicts[made.verdict].kind ?? .ruleError
                    verdicts[made.verdict].message = [verdicts[made.verdict].message, describe(error)]
                        .compactMap { $0 }.joined(separator: "\n      ")
                }
            }
            verdicts[made.verdict].values = values
        }
        var summary: [String: Int] = [:]
        for verdict in verdicts { summary[verdict.verdict.rawValue, default: 0] += 1 }
        report = Report(verdicts: verdicts, summary: summary)
    }
}

extension JSONValue {
    /// As a person reads it in the text output.
    var shown: String {
        switch self {
        case .string(let text): return "\"\(text)\""
        case .null: return "NULL"
        case .number(let number): return number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
        case .decimal(let value): return value.description
        case .integer(let value): return String(value)
        case .bool(let value): return String(value)
        case .array, .object: return "…"
        }
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}

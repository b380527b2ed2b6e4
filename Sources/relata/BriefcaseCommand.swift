import ArgumentParser
import Foundation
import Relata
import RelataRemote

/// `relata briefcase show|export`: look inside a briefcase without writing code.
struct BriefcaseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "briefcase",
        abstract: "Inspect briefcases: tables saved with their pending changes.",
        subcommands: [Show.self, Export.self])

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List a briefcase's properties and tables, with row counts and pending changes.",
            discussion: """
                Example:
                  relata briefcase show Orders.briefcase
                """)

        @Argument(help: "The briefcase: a file, or a folder briefcase.")
        var briefcase: String

        @Flag(help: "Print the summary as JSON.")
        var json = false

        func run() throws {
            try reportingFailures {
                let url = URL(fileURLWithPath: briefcase)
                let summary = Summary(try Briefcase(contentsOf: url), folder: Briefcase.layout(of: url) == .folder)
                if json {
                    try Terminal.printJSON(summary)
                } else {
                    Terminal.print(summary.text(name: url.lastPathComponent))
                }
            }
        }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print one table of a briefcase as JSON: its rows with their current values, or its pending changes.",
            discussion: """
                Examples:
                  relata briefcase export Orders.briefcase --table Orders
                  relata briefcase export Orders.briefcase --table Orders --changes
                """)

        @Argument(help: "The briefcase: a file, or a folder briefcase.")
        var briefcase: String

        @Option(help: "The table to export.")
        var table: String

        @Flag(help: "Export the pending changes (as the delta an apply would send) instead of the rows.")
        var changes = false

        @Option(name: .shortAndLong, help: "Write to this file instead of standard output (an existing file only with --force).")
        var output: String?

        @Flag(help: "Replace an existing --output file.")
        var force = false

        func run() throws {
            try reportingFailures {
                let table = try Briefcase.loadTable(named: self.table, from: URL(fileURLWithPath: briefcase))
                let data: Data
                if changes {
                    data = try Terminal.json(try table.makeDelta())
                } else {
                    data = try table.jsonData(prettyPrinted: true)
                }
                if let output {
                    // An export is JSON like many files a user has (a schema's data files among them):
                    // only --force replaces one.
                    try OutputFile(path: output, what: "an export", force: force).write(data) { _ in false }
                } else {
                    Terminal.print(String(decoding: data, as: UTF8.self))
                }
            }
        }
    }

    /// What `show` prints.
    struct Summary: Encodable {
        struct Table: Encodable {
            var name: String
            var fields: [String]
            var rows: Int
            /// Pending changes by row state (`added`, `modified`, `deleted`, `addedInEditMode`).
            var pending: [String: Int]
            /// Changes a data source rejected, still pending with their message.
            var failed: Int
            /// Rows in edit mode (their unposted edits are kept).
            var inEditMode: Int
        }
        var layout: String
        var properties: [String: String]
        var tables: [Table]

        init(_ briefcase: Briefcase, folder: Bool) {
            layout = folder ? "folder" : "file"
            properties = briefcase.properties
            tables = briefcase.tables.map { table in
                var pending: [String: Int] = [:]
                for state in [RowState.added, .modified, .deleted, .addedInEditMode] {
                    let count = table.rowSet(in: state).count
                    if count > 0 { pending[state.rawValue] = count }
                }
                let changed = table.changedRows
                return Table(name: table.name, fields: table.fields.map(\.name), rows: table.rowCount, pending: pending,
                             failed: changed.filter { $0.failureMessage != nil }.count,
                             inEditMode: changed.filter(\.isInEditMode).count)
            }
        }

        func text(name: String) -> String {
            var lines = ["\(name) (\(layout) briefcase)"]
            lines.append(properties.isEmpty ? "properties: none" : "properties:")
            for key in properties.keys.sorted() { lines.append("  \(key) = \(Self.shown(properties[key]!, of: key))") }
            lines.append(tables.isEmpty ? "tables: none" : "tables:")
            let width = tables.map(\.name.count).max() ?? 0
            for table in tables {
                let total = table.pending.values.reduce(0, +)
                var text = "  \(table.name.padding(toLength: width, withPad: " ", startingAt: 0))  \(table.rows) row\(table.rows == 1 ? "" : "s"), "
                if total == 0 {
                    text += "no pending changes"
                } else {
                    let parts = ["added", "modified", "deleted", "addedInEditMode"].compactMap { state in
                        table.pending[state].map { "\($0) \(state == "addedInEditMode" ? "added in edit mode" : state)" }
                    }
                    text += "\(total) pending change\(total == 1 ? "" : "s") (\(parts.joined(separator: ", ")))"
                }
                if table.failed > 0 { text += ", \(table.failed) failed" }
                if table.inEditMode > 0 { text += ", \(table.inEditMode) in edit mode" }
                lines.append(text)
            }
            return lines.joined(separator: "\n")
        }

        /// A property as a line: what a client's schema or unanswered apply holds, summed up; any
        /// other long or multi-line value cut short with its length (`--json` prints them whole).
        static func shown(_ value: String, of key: String) -> String {
            switch key {
            case RemoteDataAdapter.BriefcaseKey.schema:
                if let schema = try? JSONDecoder().decode(SchemaDefinition.self, from: Data(value.utf8)) {
                    let scripts = schema.scripts.count
                    return "the schema \(schema.name): \(schema.tables.count) table\(schema.tables.count == 1 ? "" : "s") "
                        + "(\(schema.tables.map(\.name).joined(separator: ", "))), \(scripts) rule script\(scripts == 1 ? "" : "s")"
                }
            case RemoteDataAdapter.BriefcaseKey.unansweredApply:
                if let request = try? DeltaJSON.decodeRequest(Array(value.utf8)) {
                    let changes = request.deltas.changeCount
                    return "a batch sent without an answer: \(changes) change\(changes == 1 ? "" : "s")"
                        + (request.apply.map { " (apply id \($0.id)); the next apply sends it again first" } ?? "")
                }
            case RemoteDataAdapter.BriefcaseKey.fetchedTables:
                return value.split(separator: "\n").joined(separator: ", ")
            default:
                break
            }
            let firstLine = value.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
            guard firstLine.count > 100 || firstLine.count < value.count else { return value }
            return String(firstLine.prefix(100)) + "… (\(value.count) characters)"
        }
    }
}

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
              relata run Examples/PCTrade/PCTrade.schema.json --edits edits.json --user ann --role Clerk --value Region=EU
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

    @OptionGroup(title: "The session the rules see")
    var session: SessionOptions

    func run() throws {
        var exit: ExitCode?
        try reportingFailures {
            let schema = try Schema(contentsOf: URL(fileURLWithPath: self.schema))
            let edits = try Edit.list(contentsOf: URL(fileURLWithPath: self.edits))
            let adapter = try schema.makeAdapter(logger: Logger(label: "relata.rules"))
            adapter.session = try session.session(over: schema)
            let target = saveBriefcase.map { OutputFile(path: $0, what: "a Relata briefcase", force: force) }
            let progress = ProgressBar(total: edits.count)
            var run = EditRun(edits: edits, on: adapter.tables) { progress.advance($0) }
            progress.finish()
            if !noApply { run.record(try adapter.applyChanges(for: adapter.tables)) }
            let report = run.report()
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

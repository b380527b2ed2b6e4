import ArgumentParser
import Foundation
import Relata
import RelataScript

/// `relata check FILE…`: schemas and scripts checked without running them.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check schemas and rule scripts without running them: syntax errors at file:line:column, misspelled handlers.",
        discussion: """
            A schema (*.json) is read and checked, then every script and test file it names. \
            Scripts (*.js) are checked on their own.

            Example:
              relata check Examples/PCTrade/PCTrade.schema.json
            """)

    @Argument(help: "Schema files (*.json) and scripts (*.js).")
    var files: [String]

    @Flag(help: "Print the diagnostics as JSON.")
    var json = false

    func validate() throws {
        if files.isEmpty { throw ValidationError("name at least one schema or script") }
    }

    func run() throws {
        var errors = 0
        try reportingFailures {
            let engine = try ScriptEngine()
            var scripts: [(url: URL, name: String)] = []
            for file in files {
                let url = URL(fileURLWithPath: file)
                if url.pathExtension.lowercased() == "json" {
                    let schema = try Schema(contentsOf: url)
                    let folder = url.deletingLastPathComponent()
                    scripts += (schema.scriptFiles + (try schema.testFiles())).map { ($0, relativeName(of: $0, to: folder)) }
                } else {
                    scripts.append((url, file))
                }
            }
            var diagnostics: [ScriptCheck.Diagnostic] = []
            for script in scripts {
                let source = try InputFile.text(at: script.url, what: "script")
                diagnostics += ScriptCheck.check(RuleScript(source, fileName: script.name), engine: engine)
            }
            errors = diagnostics.filter { $0.severity == .error }.count
            if json {
                try Terminal.printJSON(diagnostics)
                return
            }
            for diagnostic in diagnostics { Terminal.print(diagnostic.description) }
            let warnings = diagnostics.count - errors
            Terminal.print("\(scripts.count) script\(scripts.count == 1 ? "" : "s") checked: \(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s")")
        }
        if errors > 0 { throw ExitStatus.rulesSaidNo }
    }
}

import ArgumentParser
import Foundation
import Relata
import RelataScript
import RelataTools

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
        var diagnostics: [ScriptCheck.Diagnostic] = []
        var scriptCount = 0
        try reportingFailures {
            let engine = try ScriptEngine()
            var scripts: [(url: URL, name: String)] = []
            for file in files {
                let url = URL(fileURLWithPath: file)
                guard url.pathExtension.lowercased() == "json" else {
                    scripts.append((url, file))
                    continue
                }
                // An array is an edits file; anything else a schema, loaded exactly as `relata run` loads it.
                if case .array? = try? JSONDecoder().decode(JSONValue.self, from: InputFile.data(at: url, what: "file")) {
                    do { _ = try Edit.list(contentsOf: url) } catch { diagnostics.append(Self.diagnostic(error, file: file)) }
                    continue
                }
                let schema: Schema
                do { schema = try Schema(contentsOf: url) } catch {
                    diagnostics.append(Self.diagnostic(error, file: file))
                    continue
                }
                let folder = url.deletingLastPathComponent()
                scripts += (schema.scriptFiles + ((try? schema.testFiles()) ?? [])).map { ($0, relativeName(of: $0, to: folder)) }
                do { _ = try schema.makeAdapter(engine: engine) } catch { diagnostics.append(Self.diagnostic(error, file: file)) }
            }
            for script in scripts {
                do {
                    diagnostics += ScriptCheck.check(RuleScript(try InputFile.text(at: script.url, what: "script"), fileName: script.name),
                                                     engine: engine)
                } catch {
                    diagnostics.append(Self.diagnostic(error, file: script.name))
                }
            }
            scriptCount = scripts.count
            // A script error found both by loading and by the syntax check is reported once.
            var seen = Set<String>()
            diagnostics = diagnostics.filter { seen.insert($0.description).inserted }
            if json {
                try Terminal.printJSON(diagnostics)
                return
            }
            for diagnostic in diagnostics { Terminal.print(diagnostic.description) }
            let errors = diagnostics.filter { $0.severity == .error }.count, warnings = diagnostics.count - errors
            Terminal.print("\(files.count) file\(files.count == 1 ? "" : "s") and \(scriptCount) script\(scriptCount == 1 ? "" : "s") checked: "
                + "\(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s")")
        }
        // The status `relata run` would end with: 2 for a file it could not load, 3 for a broken script.
        let errors = diagnostics.filter { $0.severity == .error }
        if errors.contains(where: { $0.kind == .file }) { throw ExitStatus.badInput }
        if !errors.isEmpty { throw ExitStatus.ruleIsBroken }
    }

    /// A load error as a diagnostic at its place: a script's file, line and column, or the file and place a
    /// ``RelataError`` names.
    static func diagnostic(_ error: any Error, file: String) -> ScriptCheck.Diagnostic {
        switch error {
        case let error as ScriptError:
            return ScriptCheck.Diagnostic(severity: .error, file: error.file ?? file, line: error.line, column: error.column,
                                          message: [error.event.map { event in error.table.map { "\(event) on \($0)" } ?? event },
                                                    error.message].compactMap { $0 }.joined(separator: ": "),
                                          kind: .script)
        case let error as RelataError:
            var located = error
            let place = located.location ?? file
            located.location = nil
            return ScriptCheck.Diagnostic(severity: .error, file: place, message: "\(located)", kind: .file)
        default:
            return ScriptCheck.Diagnostic(severity: .error, file: file, message: "\(error)", kind: .file)
        }
    }
}

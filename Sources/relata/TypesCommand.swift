import ArgumentParser
import Foundation
import RelataScript

/// `relata types SCHEMA`: TypeScript declarations for editors.
struct TypesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "types",
        abstract: "Print TypeScript declarations of a schema's tables and the rule API, for editor autocompletion.",
        discussion: """
            Example:
              relata types Examples/PCTrade/PCTrade.schema.json --output Examples/PCTrade/rules/relata.d.ts
            """)

    @Argument(help: "The schema file (JSON).")
    var schema: String

    @Option(name: .shortAndLong, help: "Write the declarations to this file instead of standard output.")
    var output: String?

    func run() throws {
        try reportingFailures {
            let schema = try Schema(contentsOf: URL(fileURLWithPath: self.schema))
            let text = TypeScriptDeclarations.make(for: schema.description)
            if let output {
                try Data(text.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
            } else {
                Terminal.print(text)
            }
        }
    }
}

import ArgumentParser
import Foundation
import RelataScript
import RelataTools

/// `relata types SCHEMA`: TypeScript declarations for editors.
struct TypesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "types",
        abstract: "Print TypeScript declarations of a schema's tables and the rule API, for editor autocompletion.",
        discussion: """
            Rule scripts and rule test files see different globals: declare each folder's own.

            Examples:
              relata types Examples/PCTrade/PCTrade.schema.json --output Examples/PCTrade/rules/relata.d.ts
              relata types Examples/PCTrade/PCTrade.schema.json --tests --output Examples/PCTrade/tests/relata.d.ts
            """)

    @Argument(help: "The schema file (JSON).")
    var schema: String

    @Option(name: .shortAndLong, help: "Write the declarations to this file instead of standard output.")
    var output: String?

    @Flag(help: "Declare what rule test files see (test, fixture, expect, …) instead of what rule scripts see.")
    var tests = false

    @Flag(help: "Replace an existing --output file even if `relata types` did not make it.")
    var force = false

    func run() throws {
        try reportingFailures {
            let schema = try Schema(contentsOf: URL(fileURLWithPath: self.schema))
            let text = TypeScriptDeclarations.make(for: schema.description, audience: tests ? .tests : .rules)
            if let output {
                // Declarations start with the comment `relata types` writes; any other file is the user's.
                let marker = Array(text.prefix { $0 != "\n" }.utf8.prefix(20))
                try OutputFile(path: output, what: "TypeScript declarations made by `relata types`", force: force)
                    .write(Data(text.utf8)) { OutputFile.starts($0, with: marker) }
            } else {
                Terminal.print(text)
            }
        }
    }
}

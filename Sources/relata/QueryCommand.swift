import ArgumentParser
import Foundation
import Logging
import Relata
import RelataScript
import RelataTools

/// `relata query SCHEMA "SELECT …"`: DA SQL over a schema's data, offline.
struct QueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Run a DA SQL query over a schema's data files and print the answer.",
        discussion: """
            The query names the schema's tables and fields (Documentation/DASQL.md); it runs over the \
            data the schema's data files hold, as a data server holding the same rows answers it.

            Examples:
              relata query Examples/PCTrade/PCTrade.schema.json "SELECT ClientName FROM Clients WHERE Active ORDER BY 1"
              relata query Examples/PCTrade/PCTrade.schema.json \\
                "SELECT c.ClientName, COUNT(*) AS Orders FROM Clients c JOIN Orders o ON o.ClientId = c.ClientId \\
                 WHERE o.OrderDate >= :since GROUP BY c.ClientName" --param since=2024-01-01 --json
            """)

    @Argument(help: "The schema file (JSON; see Documentation/Schema.md).")
    var schema: String

    @Argument(help: "The query: one SELECT over the schema's tables.")
    var query: String

    @Option(name: .customLong("param"), help: "A parameter of the query, name=value (a number, true, false, null, or text).")
    var parameters: [String] = []

    @Flag(help: "Print the rows as JSON.")
    var json = false

    func validate() throws {
        for parameter in parameters where !parameter.contains("=") {
            throw ValidationError("--param takes name=value, not '\(parameter)'")
        }
    }

    func run() throws {
        try reportingFailures {
            let schema = try Schema(contentsOf: URL(fileURLWithPath: self.schema))
            let adapter = try schema.makeAdapter(logger: Logger(label: "relata.rules"))
            let answer = try adapter.table(sql: query, parameters: CommandLineValues.parse(parameters))
            if json {
                Terminal.print(String(decoding: try answer.jsonData(prettyPrinted: true), as: UTF8.self))
            } else {
                Terminal.print(TableText(answer).text)
            }
        }
    }
}

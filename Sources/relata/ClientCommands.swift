import ArgumentParser
import Foundation
import Relata
import RelataRemote
import RelataTools

/// Where the server is and who logs in: shared by the client commands.
struct ServerOptions: ParsableArguments {
    @Argument(help: "The server's address (http://127.0.0.1:7099).")
    var url: String

    @Option(help: "The data service: DataService (the server's first schema) or DataService.<Schema>.")
    var service = "DataService"

    @Option(help: "The user to log in as (else $RELATA_USER).")
    var user: String?

    @Option(help: "The domain to log in to (else $RELATA_DOMAIN; the server's first when neither is set).")
    var domain: String?

    func validate() throws {
        guard let parsed = URL(string: url), let scheme = parsed.scheme, ["http", "https"].contains(scheme), parsed.host != nil else {
            throw ValidationError("'\(url)' is not a server address; give one such as http://127.0.0.1:7099")
        }
    }

    /// An adapter for the server, with the credentials of the options and the environment.
    /// The password comes only from $RELATA_PASSWORD: an option would show it in the process list.
    func adapter() throws -> RemoteDataAdapter {
        let environment = ProcessInfo.processInfo.environment
        guard let address = URL(string: url) else { throw ValidationError("'\(url)' is not a server address") }
        let adapter = RemoteDataAdapter(targetURL: address, dataService: service)
        guard let user = user ?? environment["RELATA_USER"] else {
            throw RelataError(.invalidArgument, "no user to log in as: give --user or set RELATA_USER (and RELATA_PASSWORD)")
        }
        guard let password = environment["RELATA_PASSWORD"] else {
            throw RelataError(.invalidArgument, "no password: set RELATA_PASSWORD (it is never read from the command line, where others could see it)")
        }
        adapter.credentials = RemoteCredentials(user: user, password: password, domain: domain ?? environment["RELATA_DOMAIN"])
        return adapter
    }

    /// Runs `body` with one session for the whole command, and logs out when it is done — however
    /// it ends: a command leaves no session behind on the server.
    func withAdapter<Result>(_ body: (RemoteDataAdapter) async throws -> Result) async throws -> Result {
        let adapter = try adapter()
        do {
            let result = try await body(adapter)
            try? await adapter.logOut()
            return result
        } catch {
            try? await adapter.logOut()
            throw error
        }
    }
}

/// `relata get URL TABLE`: a table from a server, printed.
struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Fetch a table, or the answer of a DA SQL query, from a Relata server and print it.",
        discussion: """
            Logs in as --user (or $RELATA_USER) with the password in $RELATA_PASSWORD. With --sql, \
            the server answers a DA SQL query (Documentation/DASQL.md) over the tables the user may read.

            Examples:
              RELATA_USER=demo RELATA_PASSWORD=demo relata get http://127.0.0.1:7099 Clients
              relata get http://127.0.0.1:7099 Orders --where "ClientId = :client AND Status = 'open'" --param client=9 --json
              relata get http://127.0.0.1:7099 Products --fields ProductId,ProductName --max 10
              relata get http://127.0.0.1:7099 --sql "SELECT Category, COUNT(*) AS N FROM Products GROUP BY Category ORDER BY N DESC"
            """)

    @OptionGroup var server: ServerOptions

    @Argument(help: "The table (left out with --sql).")
    var table: String?

    @Option(help: "A DA SQL query to answer instead of a table, with :parameters.")
    var sql: String?

    @Option(name: .customLong("where"), help: "A where expression (Documentation/Expressions.md), with :parameters.")
    var whereExpression: String?

    @Option(name: .customLong("param"), help: "A parameter of the where expression or query, name=value (a number, true, false, null, or text).")
    var parameters: [String] = []

    @Option(help: "The fields to fetch, separated by commas (all when left out).")
    var fields: String?

    @Option(help: "The most rows to fetch.")
    var max: Int?

    @Flag(help: "Print the rows as JSON.")
    var json = false

    func validate() throws {
        switch (table, sql) {
        case (nil, nil): throw ValidationError("name a table, or give a query with --sql")
        case (_?, _?): throw ValidationError("name a table or give --sql, not both")
        case (nil, _?) where whereExpression != nil || fields != nil:
            throw ValidationError("--where and --fields go with a table; a query says what it reads")
        default: break
        }
        if let max, max < 0 { throw ValidationError("--max cannot be negative") }
        for parameter in parameters where !parameter.contains("=") {
            throw ValidationError("--param takes name=value, not '\(parameter)'")
        }
    }

    func run() async throws {
        try await reportingFailures {
            try await server.withAdapter { adapter in
                let table: DataTable
                var computed: Set<String> = []
                if let sql {
                    table = try await adapter.getDataTable(sql: sql, parameters: CommandLineValues.parse(parameters), maxRecords: max)
                } else {
                    let names = fields?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                    let schema = try await adapter.loadSchema()
                    let definition = schema.table(named: self.table ?? "")
                    let virtual = Set((definition?.lookupFields.map(\.name) ?? []) + (definition?.calculatedFields.map(\.name) ?? [])
                        .map { $0.lowercased() })
                    // A lookup or calculated field is computed here from the whole row: all stored fields are fetched then.
                    let asksVirtual = names?.contains { virtual.contains($0.lowercased()) } ?? false
                    let fetched = try await adapter.getDataTable(self.table ?? "", fields: asksVirtual ? nil : names, where: whereExpression,
                                                                 parameters: CommandLineValues.parse(parameters), maxRecords: max)
                    (table, computed) = try FieldsShown.table(fetched, showing: names, schema: schema)
                }
                if json {
                    Terminal.print(String(decoding: try table.jsonData(prettyPrinted: true), as: UTF8.self))
                } else {
                    Terminal.print(TableText(table, computed: computed).text)
                }
            }
        }
    }
}

/// `relata apply URL --edits FILE`: edits through the server's rules, applied to the server.
struct ApplyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apply",
        abstract: "Make edits against a server's tables through its rules, and apply them to the server.",
        discussion: """
            The tables the edits name are fetched; each edit is made as a user would make it, with the \
            server's rules running here (the same scripts, downloaded); then the changes are validated \
            here and sent. The verdicts print as `relata run` prints them, so the same edits file can be \
            run offline, validated against a server, and applied, and the outputs compared.

            Examples:
              RELATA_USER=demo RELATA_PASSWORD=demo relata apply http://127.0.0.1:7099 --edits Examples/PCTrade/edits/scenario.json
              relata apply http://127.0.0.1:7099 --edits edits.json --validate-only --json
            """)

    @OptionGroup var server: ServerOptions

    @Option(name: .shortAndLong, help: "A JSON file listing the edits: inserts, updates and deletes.")
    var edits: String

    @Flag(help: "Validate the changes with the server's rules here; send nothing.")
    var validateOnly = false

    @Flag(help: "Print the verdicts as JSON.")
    var json = false

    func run() async throws {
        var exit: ExitCode?
        try await reportingFailures {
            let edits = try Edit.list(contentsOf: URL(fileURLWithPath: self.edits))
            try await server.withAdapter { adapter in
                let schema = try await adapter.loadSchema()
                var named: [String] = []
                for edit in edits where !named.contains(where: { $0.equalsIgnoringCase(edit.table) }) {
                    named.append(schema.table(named: edit.table)?.name ?? edit.table)
                }
                _ = try await adapter.getDataTables(named.filter { schema.table(named: $0) != nil }.map { DataRequest(table: $0) })
                let progress = ProgressBar(total: edits.count)
                var run = EditRun(edits: edits, on: adapter.tables) { progress.advance($0) }
                progress.finish()
                let changed = adapter.tables.filter(\.hasChanges)
                if validateOnly {
                    run.record(try await adapter.validateChanges(for: changed), passing: .validated)
                } else {
                    do {
                        run.record(try await adapter.applyChanges(for: changed))
                    } catch let refusal as RemoteError where refusal.kind == .permanent {
                        // Refused as a whole (a permission, say): each edit still gets its verdict, with the server's words.
                        run.record(try Self.refusedWhole(changed, refusal))
                    }
                }
                let report = run.report()
                if json {
                    try Terminal.printJSON(report)
                } else {
                    Terminal.print(report.text(schema: schema.name))
                }
                exit = ExitStatus.for(report.verdicts.compactMap(\.kind))
            }
        }
        if let exit { throw exit }
    }
}

extension ApplyCommand {
    /// The verdicts of changes the server refused with the whole request: each failed with the
    /// message its row now carries (the server's, or what validation here said before).
    static func refusedWhole(_ tables: [DataTable], _ refusal: RemoteError) throws -> [Delta] {
        try tables.map { table in
            var delta = try table.makeDelta()
            let rows = Dictionary(table.changedRows.map { ($0.changeId, $0) }, uniquingKeysWith: { first, _ in first })
            for index in delta.changes.indices {
                let message = rows[delta.changes[index].changeId]?.failureMessage ?? refusal.message
                delta.changes[index].fail(ChangeFailure(.refusal, message))
            }
            return delta
        }
    }
}

/// What `relata get` shows of a table: the fields asked for — stored, lookup or calculated — or
/// every stored field and then every lookup and calculated field, which the server's rules compute
/// here (as a client's user sees them).
enum FieldsShown {
    /// A table holding the fields shown, and the names of those computed here.
    static func table(_ fetched: DataTable, showing names: [String]?, schema: SchemaDefinition) throws -> (DataTable, computed: Set<String>) {
        let definition = schema.table(named: fetched.name)
        var types: [String: (name: String, type: DataType)] = [:]
        for field in definition?.calculatedFields ?? [] { types[field.name.lowercased()] = (field.name, field.type) }
        for lookup in definition?.lookupFields ?? [] {
            let type = schema.table(named: lookup.lookupTable)?.fields.first { $0.name.equalsIgnoringCase(lookup.lookupResultField) }?.type
            types[lookup.name.lowercased()] = (lookup.name, type ?? .string)
        }
        let wanted = names ?? (fetched.fields.map(\.name) + fetched.virtualFieldNames)
        var fields: [FieldDefinition] = [], computed: Set<String> = []
        for name in wanted {
            if let stored = fetched.field(named: name) {
                fields.append(FieldDefinition(stored.name, stored.type, size: stored.size))
            } else if let virtual = types[name.lowercased()] {
                fields.append(FieldDefinition(virtual.name, virtual.type))
                computed.insert(virtual.name)
            } else {
                throw RelataError(.unknownField, "the table has no field '\(name)'", table: fetched.name, field: name)
            }
        }
        guard !computed.isEmpty else { return (fetched, []) }
        let shown = try DataTable(name: fetched.name, fields: fields)
        try shown.loadRows(fetched.rows.map { row in fields.map { (try? row.value(forKey: $0.name)) ?? .null } })
        return (shown, computed)
    }
}

/// A table's fields as aligned text columns, long values cut short; a field computed here (a
/// lookup or calculated field) is marked `*`.
struct TableText {
    let text: String

    init(_ table: DataTable, computed: Set<String> = [], widest: Int = 40) {
        let names = table.fields.map(\.name)
        let cells = table.rows.map { row in
            names.map { name -> String in
                let value = (try? row.value(forKey: name)) ?? .null
                let shown: String
                switch value {
                case .null: shown = "NULL"
                case .string(let text): shown = text
                default: shown = "\(value)"
                }
                return shown.count > widest ? String(shown.prefix(widest - 1)) + "…" : shown
            }
        }
        let headers = names.map { computed.contains($0) ? $0 + "*" : $0 }
        let widths = names.indices.map { column in ([headers[column]] + cells.map { $0[column] }).map(\.count).max() ?? 0 }
        func line(_ parts: [String]) -> String {
            zip(parts, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }
        var lines = [line(headers), line(widths.map { String(repeating: "-", count: $0) })]
        lines += cells.map(line)
        lines.append("\(table.rowCount) row\(table.rowCount == 1 ? "" : "s")" + (computed.isEmpty ? "" : "; * computed by the rules here (lookup or calculated)"))
        text = lines.joined(separator: "\n")
    }
}

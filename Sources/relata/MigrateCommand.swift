import ArgumentParser
import Foundation
import Logging
import Relata
import RelataServer
import RelataTools

/// `relata migrate SCHEMA --database D [--dry-run]`: brings a database's tables to a schema by
/// additive changes, in one transaction.
struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Bring a database's tables to a schema: new tables, columns and foreign keys, in one transaction.",
        discussion: """
            Prints each statement, then runs them all in one transaction (with --dry-run, prints
            them and changes nothing). Only additive changes are made: new tables, new columns (a
            required field filled with its defaultValue), new foreign keys. A change that could
            lose or misread data — a column of another type, another primary key, a NOT NULL
            column the schema lacks — is refused, naming what to do instead, and nothing is
            changed. A server started meanwhile waits for the migration to end. On SQLite, a table
            that gets a foreign key or a required column is built anew and its rows copied.

            Examples:
              relata migrate Shop/Shop.schema.json --database shop.sqlite --dry-run
              relata migrate Shop/Shop.schema.json --database postgres://shop:secret@127.0.0.1:5432/shop
            """)

    @Argument(help: "The schema file (JSON).")
    var schema: String

    @Option(help: ArgumentHelp("The database: a SQLite file, or postgres://user:password@host:port/database.", valueName: "file-or-url"))
    var database: String

    @Flag(help: "Print the statements without running them.")
    var dryRun = false

    func run() throws {
        let steps: [SchemaMigration.Step]
        do {
            guard FileManager.default.fileExists(atPath: schema) else { throw RelataError(.fileFailed, "the schema file does not exist", location: schema) }
            let definition = try Schema(contentsOf: URL(fileURLWithPath: schema)).definition()
            if !ServeCommand.isPostgres(database) && !FileManager.default.fileExists(atPath: database) {
                throw RelataError(.fileFailed, "the database does not exist (relata serve creates and seeds one)", location: database)
            }
            let opened = try ServeCommand.open(database, logger: Logger(label: "relata.migrate"))
            defer { opened.close() }
            steps = try SchemaMigration.run(definition, on: opened, dryRun: dryRun).steps
        } catch let error as SQLError where error.kind == .unavailable {
            Terminal.error("the database could not be reached: \(error.message)")
            throw ExitStatus.serverUnavailable
        } catch {
            Terminal.error(describe(error))
            throw ExitStatus.badInput
        }
        let shown = ServeCommand.shown(database)
        guard !steps.isEmpty else {
            Terminal.print("\(shown) matches the schema already; nothing to do")
            return
        }
        for step in steps { Terminal.print("\(step);") }
        Terminal.print(dryRun ? "\(steps.count) statement(s) would run on \(shown) (--dry-run: nothing was changed)"
                              : "migrated \(shown): \(steps.count) statement(s) in one transaction")
    }
}

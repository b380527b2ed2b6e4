import ArgumentParser
import Foundation
import Logging
import Relata
import RelataServer
import RelataTools

/// `relata sessions list|end`: a server's sessions, as its operator sees and ends them.
struct SessionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sessions",
        abstract: "List a data server's sessions, or end a user's (or everyone's).",
        discussion: """
            The sessions live in the server's session database: give it with --sessions (a SQLite
            file such as pctrade.sqlite-sessions, or the postgres:// URL the server uses), or give
            the server's --config file. Every instance sharing that database sees the change at once.
            """,
        subcommands: [List.self, End.self])

    /// Where the sessions are.
    struct Location: ParsableArguments {
        @Option(help: ArgumentHelp("The session database: a SQLite file, or a postgres:// URL.", valueName: "file-or-url"))
        var sessions: String?

        @Option(help: "A server configuration file: its sessions entry (sessions.sqlite beside it when left out).")
        var config: String?

        func validate() throws {
            guard (sessions == nil) != (config == nil) else { throw ValidationError("give the session database with --sessions, or the server's --config") }
        }

        func store() throws -> SessionStore {
            var logger = Logger(label: "relata.sessions")
            logger.logLevel = .error
            let location: String
            if let sessions {
                guard ServeCommand.isPostgres(sessions) || FileManager.default.fileExists(atPath: sessions) else {
                    throw RelataError(.fileFailed, "there is no session database at \(sessions)")
                }
                location = sessions
            } else {
                let file = try ServerConfigFile(contentsOf: URL(fileURLWithPath: config ?? ""))
                location = file.contents.sessions.map { ServeCommand.isPostgres($0) ? $0 : file.resolve($0).path } ?? file.resolve("sessions.sqlite").path
            }
            return try SessionStore(database: ServeCommand.open(location, logger: logger, synchronous: false))
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the sessions that have not expired: user, domain, roles, and when each started and ends.",
            discussion: """
                Example:
                  relata sessions list --sessions PCTrade.sqlite-sessions
                """)

        @OptionGroup var location: Location

        @Flag(help: "Print the sessions as JSON.")
        var json = false

        func run() throws {
            try reportingFailures {
                let listed = try location.store().list()
                if json {
                    try Terminal.printJSON(listed)
                    return
                }
                let format = ISO8601DateFormatter()
                for session in listed {
                    Terminal.print("\(session.user)  \(session.domain)  [\(session.roles.joined(separator: ", "))]  since \(format.string(from: session.started))  "
                                   + "until \(format.string(from: session.expires)) (at most \(format.string(from: session.ends)))")
                }
                Terminal.print("\(listed.count) session\(listed.count == 1 ? "" : "s")")
            }
        }
    }

    struct End: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "End the sessions of a user (in one domain, or in all), or every session.",
            discussion: """
                Examples:
                  relata sessions end --sessions PCTrade.sqlite-sessions --user clerk
                  relata sessions end --config server.json --all
                """)

        @OptionGroup var location: Location

        @Option(help: "The user whose sessions end.")
        var user: String?

        @Option(help: "Only the user's sessions in this domain.")
        var domain: String?

        @Flag(help: "End every session: everyone logs in again.")
        var all = false

        func validate() throws {
            guard (user != nil) != all else { throw ValidationError("give --user NAME, or --all") }
            if domain != nil && all { throw ValidationError("--domain goes with --user") }
        }

        func run() throws {
            try reportingFailures {
                let store = try location.store()
                let ended = try user.map { try store.end(user: $0, domain: domain) } ?? store.endAll()
                Terminal.print("ended \(ended) session\(ended == 1 ? "" : "s")")
            }
        }
    }
}

import ArgumentParser

/// `relata`: run, test and check business rules from the command line.
@main
struct Relata: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relata",
        abstract: "Run, test and check Relata business rules; serve them with their data.",
        discussion: """
            Exit statuses (when several apply, 3 wins over 1):
              0   all passed: every edit applied, every test green, every script valid
              1   the rules said no: a refused or failed edit, a failed test
              2   a file is missing, unreadable or malformed; or nothing to run
              3   a rule is broken: a script error, a throw that is not a fail()
              4   the server or database could not be reached, or failed (get, apply, migrate): retrying may work
              5   the server refused the user (get, apply): a failed login, a permission
              64  a wrong command line: an unknown option, a missing or bad value
            """,
        version: "0.1.0",
        subcommands: [RunCommand.self, TestCommand.self, CheckCommand.self, TypesCommand.self, BriefcaseCommand.self,
                      ServeCommand.self, MigrateCommand.self, SessionsCommand.self, HashPasswordCommand.self, GetCommand.self, ApplyCommand.self, QueryCommand.self])
}

import ArgumentParser

/// `relata`: run, test and check business rules from the command line.
@main
struct Relata: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relata",
        abstract: "Run, test and check Relata business rules.",
        discussion: """
            Exit statuses:
              0   all passed: every edit applied, every test green, every script valid
              1   rules said no: a refused or failed edit, a failed test, a script error
              2   a schema, edits, data or briefcase file is missing or malformed
              64  the command line is wrong (an unknown option, a missing argument)
            """,
        version: "0.1.0",
        subcommands: [RunCommand.self, TestCommand.self, CheckCommand.self, TypesCommand.self, BriefcaseCommand.self])
}

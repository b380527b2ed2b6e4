import ArgumentParser

/// `relata`: run, test and check business rules from the command line.
@main
struct Relata: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relata",
        abstract: "Run, test and check Relata business rules.",
        discussion: """
            Exit statuses:
              0   everything passed (every edit applied, every test green, every script valid)
              1   the rules said no: an edit was refused (by a rule or a bad value) or failed, a test failed,
                  a script has an error
              2   the work could not be done: a schema, edits or data file is missing or malformed
              64  the command line itself is wrong (an unknown option, a missing argument)
            """,
        version: "0.1.0",
        subcommands: [RunCommand.self, TestCommand.self, CheckCommand.self, TypesCommand.self, BriefcaseCommand.self])
}

import ArgumentParser
import Foundation
import Logging
import Relata
import RelataScript
import RelataTools

/// `relata test SCHEMA [FILES…]`: rule test files, with readable output and an exit status.
struct TestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test",
        abstract: "Run rule test files (JavaScript; see Documentation/RuleTests.md).",
        discussion: """
            Each test starts from the schema's data plus its file's fixtures, on a fresh adapter. \
            Without file arguments, runs the test files the schema lists under "tests".

            Examples:
              relata test Examples/PCTrade/PCTrade.schema.json
              relata test Examples/PCTrade/PCTrade.schema.json --filter credit --coverage
            """)

    @Argument(help: "The schema file (JSON).")
    var schema: String

    @Argument(help: "Test files (*.test.js). Default: the schema's \"tests\".")
    var files: [String] = []

    @Option(help: "Run only tests whose name (or file) contains this text, ignoring case.")
    var filter: String?

    @Flag(help: "Report which script functions ran and which fail() calls were reached.")
    var coverage = false

    @Option(help: "Stop a test after this many seconds of script time (more than 0, at most 86400).")
    var timeLimit: Double = 5

    @Flag(help: "Show what the rules log(…) while the tests run (hidden otherwise).")
    var log = false

    @Flag(help: "Print the results (and coverage) as JSON.")
    var json = false

    @OptionGroup(title: "The session each test starts with (a test may set another with setSession)")
    var session: SessionOptions

    func validate() throws {
        guard timeLimit.isFinite, timeLimit > 0, timeLimit <= 86_400 else {
            throw ValidationError("--time-limit must be a number of seconds above 0 and at most 86400 (a day), not \(timeLimit)")
        }
    }

    func run() throws {
        var exit: ExitCode?
        try reportingFailures {
            let schema = try Schema(contentsOf: URL(fileURLWithPath: self.schema))
            let files: [(url: URL, name: String)] = try self.files.isEmpty
                ? schema.testFiles().map { ($0, relativeName(of: $0, to: schema.url.deletingLastPathComponent())) }
                : self.files.map { (URL(fileURLWithPath: $0), $0) }
            guard !files.isEmpty else {
                throw RelataError(.fileFailed, "the schema lists no test files under \"tests\"; name test files after the schema, or list them there",
                                  location: self.schema)
            }
            let recorder = coverage ? RuleCoverage() : nil
            let runner = try RuleTestRunner(schema: schema, engine: ScriptEngine(timeLimit: .milliseconds(Int64((timeLimit * 1000).rounded(.up)))),
                                            coverage: recorder, logger: rulesLogger, session: session.session(over: schema))
            let started = ContinuousClock.now
            var results: [RuleTestResult] = []
            var loaded: [RuleTestRunner.File] = []
            for file in files {
                do {
                    loaded.append(try runner.load(file.url, name: file.name))
                } catch let error as ScriptError {
                    results.append(RuleTestResult(file: file.name, test: "(loading the file)", line: error.line ?? 0, passed: false,
                                                  kind: .testError, message: error.message, location: error.location))
                }
            }
            let wanted = filter?.lowercased()
            let progress = ProgressBar(total: loaded.reduce(0) { $0 + $1.tests.count })
            for file in loaded {
                let fileMatches = wanted.map { file.name.lowercased().contains($0) } ?? true
                results += runner.run(file, filter: { name in fileMatches || name.lowercased().contains(wanted ?? "") }) { result in
                    progress.advance(result.test)
                }
            }
            progress.finish()
            if results.isEmpty, let filter {
                // Selecting nothing is not a pass.
                throw RelataError(.fileFailed, "no test matches --filter '\(filter)' (in \(files.count) file\(files.count == 1 ? "" : "s"))")
            }
            let elapsed = ContinuousClock.now - started
            let passedCount = results.filter(\.passed).count, failedCount = results.count - passedCount
            exit = ExitStatus.for(results.compactMap { $0.passed ? nil : ($0.kind ?? .testError) })
            if json {
                let output = Output(results: results, passed: passedCount, failed: failedCount, coverage: recorder?.report())
                try Terminal.printJSON(output)
                return
            }
            for result in results { Terminal.print(result.summary) }
            let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
            Terminal.print("\(passedCount) passed, \(failedCount) failed (\(String(format: "%.0f", milliseconds)) ms)")
            if let recorder {
                Terminal.print("")
                Terminal.print("Coverage")
                Terminal.print(recorder.report().text)
            }
        }
        if let exit { throw exit }
    }

    private var rulesLogger: Logger {
        var logger = Logger(label: "relata.rules")
        logger.logLevel = log ? .info : .warning
        return logger
    }

    struct Output: Encodable {
        var results: [RuleTestResult]
        var passed: Int
        var failed: Int
        var coverage: RuleCoverage.Report?
    }
}

/// A path shown relative to a folder when it is inside it.
func relativeName(of url: URL, to folder: URL) -> String {
    let path = url.standardizedFileURL.path, base = folder.standardizedFileURL.path + "/"
    return path.hasPrefix(base) ? String(path.dropFirst(base.count)) : path
}

import Foundation
import Testing

/// Every `swift run relata …` line of the README works as written.
@Suite(.timeLimit(.minutes(10))) struct ReadmeExamplesTests {
    static func examples() throws -> [[String]] {
        let readme = try String(contentsOf: RelataProcess.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        return readme.split(separator: "\n").filter { $0.hasPrefix("swift run relata ") }
            .map { $0.dropFirst("swift run relata ".count).split(separator: " ").map(String.init) }
    }

    @Test func theReadmeHasCommandLineExamples() async throws {
        let subcommands = Set(try Self.examples().compactMap(\.first))
        #expect(subcommands == ["run", "test", "check", "types", "briefcase"])
    }

    /// In README order: later examples may use what earlier ones wrote (a briefcase).
    @Test func readmeExamplesRunInOrder() async throws {
        for arguments in try Self.examples() {
            let result = try await RelataProcess.run(arguments)
            // `run` on the scenario refuses some edits on purpose (status 1); the rest must pass.
            #expect(result.status == (arguments.first == "run" ? 1 : 0), "\(arguments.joined(separator: " ")): \(result.errorOutput)")
            #expect(!result.output.isEmpty || arguments.contains("--output"))
        }
    }
}

import Foundation
import Testing

/// The progress bar appears on a terminal and nowhere else.
@Suite(.timeLimit(.minutes(10))) struct ProgressBarTests {
    static let script = "/usr/bin/script"

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: script), "needs script(1) to give the binary a terminal"))
    func drawnOnATerminal() async throws {
        // script(1) runs the command with a pseudo-terminal as its standard output and error.
        let command = "\(RelataProcess.binary.path) test \(RelataProcess.pcTradeSchema)"
        let result = try await RelataProcess.run(URL(fileURLWithPath: Self.script), ["-qec", command, "/dev/null"])
        let text = result.output + result.errorOutput
        #expect(result.status == 0)
        #expect(text.contains("\r\u{1B}[2K[########################] 30/30"))
    }

    @Test func absentWhenPiped() async throws {
        let result = try await RelataProcess.run(["test", RelataProcess.pcTradeSchema])
        #expect(!result.errorOutput.contains("[#"))
        #expect(!result.output.contains("\u{1B}"))
    }
}

import Foundation
import Testing

/// Runs the built `relata` binary (it sits beside the test bundle in the build folder).
struct RelataProcess {
    let status: Int32
    let output: String
    let errorOutput: String

    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let pcTradeSchema = packageRoot.appendingPathComponent("Examples/PCTrade/PCTrade.schema.json").path

    static var binary: URL {
        var folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        // macOS runs tests from inside an .xctest bundle.
        while folder.pathExtension == "xctest" || folder.lastPathComponent == "MacOS" || folder.lastPathComponent == "Contents" {
            folder = folder.deletingLastPathComponent()
        }
        return folder.appendingPathComponent("relata")
    }

    /// Runs `relata arguments…` in the package root; a run past `timeLimit` is killed (and
    /// fails with status SIGKILL), so a hung command fails its test instead of the whole run.
    static func run(_ arguments: [String], in directory: URL = packageRoot, environment: [String: String] = [:],
                    timeLimit: Duration = .seconds(300)) throws -> RelataProcess {
        try run(binary, arguments, in: directory, environment: environment, timeLimit: timeLimit)
    }

    /// Runs a program and collects its output, killing it past `timeLimit`.
    static func run(_ program: URL, _ arguments: [String], in directory: URL = packageRoot, environment: [String: String] = [:],
                    timeLimit: Duration = .seconds(300)) throws -> RelataProcess {
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.currentDirectoryURL = directory
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let watchdog = killing(process, after: timeLimit)
        defer { watchdog.cancel() }
        let outData = output.fileHandleForReading.readDataToEndOfFile()
        let errData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return RelataProcess(status: process.terminationStatus, output: String(decoding: outData, as: UTF8.self),
                             errorOutput: String(decoding: errData, as: UTF8.self))
    }
}

/// Kills `process` (SIGKILL) when it still runs after `limit`; cancel the item once it ended.
func killing(_ process: Process, after limit: Duration) -> DispatchWorkItem {
    let pid = process.processIdentifier
    let item = DispatchWorkItem {
        if process.isRunning {
            Issue.record("the process \(pid) ran longer than \(limit) and was killed")
            kill(pid, SIGKILL)
        }
    }
    let (seconds, attoseconds) = limit.components
    DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)), execute: item)
    return item
}

/// Waits for `process` to exit, for at most `limit`: SIGTERM first, then SIGKILL after the limit.
/// - Returns: whether it stopped within the limit without the SIGKILL.
@discardableResult
func stopping(_ process: Process, within limit: Duration) -> Bool {
    guard process.isRunning else { return true }
    process.terminate()
    let deadline = ContinuousClock.now + limit
    while process.isRunning, ContinuousClock.now < deadline { usleep(20_000) }
    guard process.isRunning else {
        process.waitUntilExit()
        return true
    }
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    return false
}

import Foundation
import RelataTestSupport
import Synchronization
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
                    timeLimit: Duration = .seconds(300)) async throws -> RelataProcess {
        try await run(binary, arguments, in: directory, environment: environment, timeLimit: timeLimit)
    }

    /// Runs a program and collects its output, killing it past `timeLimit`. The waiting is done
    /// by a thread of its own: a test waiting for a process holds none of Swift's cooperative
    /// threads, which the tests running beside need.
    static func run(_ program: URL, _ arguments: [String], in directory: URL = packageRoot, environment: [String: String] = [:],
                    timeLimit: Duration = .seconds(300)) async throws -> RelataProcess {
        await ProcessSlots.shared.take()
        defer { ProcessSlots.shared.give() }
        return try await onOwnThread {
            try runToTheEnd(program, arguments, in: directory, environment: environment, timeLimit: timeLimit)
        }
    }

    private static func runToTheEnd(_ program: URL, _ arguments: [String], in directory: URL, environment: [String: String],
                                    timeLimit: Duration) throws -> RelataProcess {
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
        // Standard error is read on a thread of its own while this one reads standard output:
        // a process that fills the pipe this thread is not reading would wait for ever.
        let errorLog = ProcessLog()
        errorLog.collect(from: errors.fileHandleForReading)
        let outData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        _ = errorLog.waitForEnd(within: .seconds(30))
        return RelataProcess(status: process.terminationStatus, output: String(decoding: outData, as: UTF8.self),
                             errorOutput: errorLog.text)
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
/// A thread of its own waits, not the test's task.
/// - Returns: whether it stopped within the limit without the SIGKILL.
@discardableResult
func stopping(_ process: Process, within limit: Duration) async -> Bool {
    guard process.isRunning else { return true }
    process.terminate()
    let deadline = ContinuousClock.now + limit
    while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
    let stopped = !process.isRunning
    if !stopped { kill(process.processIdentifier, SIGKILL) }
    await onOwnThread { process.waitUntilExit() }
    return stopped
}

/// As many busy processes at once as the machine has cores. The tests wait for a process
/// without holding a thread, so Swift Testing would otherwise start every command of every
/// test at once — dozens of `relata` processes on two cores, which slows every test beside
/// them past its time limit. A command run takes a slot until it ends; a server takes one
/// until it says where it listens (its start is the busy part).
final class ProcessSlots: Sendable {
    static let shared = ProcessSlots(count: max(ProcessInfo.processInfo.activeProcessorCount, 1))

    private let state: Mutex<(free: Int, waiting: [CheckedContinuation<Void, Never>])>

    init(count: Int) { state = Mutex((count, [])) }

    /// Waits until a slot is free and takes it.
    func take() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let taken = state.withLock { state in
                guard state.free > 0 else {
                    state.waiting.append(continuation)
                    return false
                }
                state.free -= 1
                return true
            }
            if taken { continuation.resume() }
        }
    }

    /// Gives a slot back: to the longest waiting, when one waits.
    func give() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}

import ArgumentParser
import Foundation
import Relata
import RelataRemote
import RelataScript
import RelataServer
import RelataTools

/// Exit statuses (documented in `relata --help` and `Documentation/CommandLine.md`), one rule
/// for every subcommand: the most serious outcome wins (3 over 1; 2 and 64 stop the work).
enum ExitStatus {
    /// The rules said no: a refusal (`fail()`), a wrong value or key, a failed test.
    static let rulesSaidNo = ExitCode(1)
    /// The work could not be done: a file is missing, unreadable or malformed.
    static let badInput = ExitCode(2)
    /// A rule script is broken: a syntax error, an error that is not a `fail()`, a runaway
    /// loop, a calculated field that fails.
    static let ruleIsBroken = ExitCode(3)
    /// The server could not be reached, failed, or cut its answer short: retrying may work.
    static let serverUnavailable = ExitCode(4)
    /// The server refused the user: the login failed, or his roles may not do what was asked.
    static let serverRefusedUser = ExitCode(5)

    /// The status for a server's failure: 4 when retrying may work, 5 for a refused login or
    /// permission, 2 for a request the server found wrong (an unknown table, a bad expression).
    static func `for`(_ error: RemoteError) -> ExitCode {
        if error.isRetryable { return serverUnavailable }
        if error.kind == .authentication || error.code == RelataError.Code.permissionDenied.rawValue { return serverRefusedUser }
        return badInput
    }

    /// The status for a run whose failures are of these kinds (nil when there are none).
    static func `for`(_ kinds: some Sequence<FailureKind>) -> ExitCode? {
        var worst: ExitCode?
        for kind in kinds {
            if kind.isBrokenRule { return ruleIsBroken }
            worst = rulesSaidNo
        }
        return worst
    }
}

/// Runs a subcommand's work; an error becomes a message on standard error that says
/// what to fix, and exit status 2.
func reportingFailures(_ work: () throws -> Void) throws {
    do {
        try work()
    } catch let exit as ExitCode {
        throw exit
    } catch {
        Terminal.error(describe(error))
        throw ExitStatus.badInput
    }
}

/// `reportingFailures` for the client commands: a transient server failure is exit status 4.
func reportingFailures(_ work: () async throws -> Void) async throws {
    do {
        try await work()
    } catch let exit as ExitCode {
        throw exit
    } catch let error as RemoteError {
        Terminal.error("\(error)")
        throw ExitStatus.for(error)
    } catch {
        Terminal.error(describe(error))
        throw ExitStatus.badInput
    }
}

/// An error as one line: where, then what.
func describe(_ error: any Error) -> String {
    switch error {
    case let error as RelataError: return "\(error)"
    case let error as ScriptError: return "\(error)"
    case let error as SQLError: return "the database refused: \(error.message)"
    default: return error.localizedDescription
    }
}

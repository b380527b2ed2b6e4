import ArgumentParser
import Foundation
import Relata
import RelataScript

/// Exit statuses (documented in `relata --help`).
enum ExitStatus {
    /// The rules said no: a refused edit, a failed test, a script error.
    static let rulesSaidNo = ExitCode(1)
    /// The work could not be done: bad input.
    static let badInput = ExitCode(2)
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

/// An error as one line: where, then what.
func describe(_ error: any Error) -> String {
    switch error {
    case let error as RelataError: return "\(error)"
    case let error as ScriptError: return "\(error)"
    default: return error.localizedDescription
    }
}

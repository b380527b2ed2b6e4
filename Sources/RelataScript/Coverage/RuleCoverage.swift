import Foundation
import Relata

/// Records, while rules run, which top-level functions of each script were
/// called (event handlers, calculated fields and helpers alike) and which
/// `fail(…)` calls were reached — and so which never were.
///
/// Give one to an adapter before its scripts load; one recorder can serve
/// many adapters (a test run makes a fresh adapter per test).
///
/// ```swift
/// let coverage = RuleCoverage()
/// let adapter = try schema.makeAdapter(coverage: coverage)
/// // … edits, applies …
/// print(coverage.report().text)
/// ```
public final class RuleCoverage {
    private var scripts: [String: ScriptRecord] = [:]
    private var order: [String] = []

    private struct ScriptRecord {
        let scan: ScriptScanner
        var calls: [String: Int] = [:]
        var failHits: [Int: Int] = [:]   // by index into scan.failCalls
    }

    public init() {}

    /// Starts following a script (again, when an adapter loads it anew: counts add up).
    func register(_ script: RuleScript) {
        guard scripts[script.fileName] == nil else { return }
        scripts[script.fileName] = ScriptRecord(scan: ScriptScanner(script.source))
        order.append(script.fileName)
    }

    /// The top-level functions of a script that calls are counted for.
    func functionNames(in file: String) -> [String] {
        scripts[file]?.scan.functions.map(\.name) ?? []
    }

    func functionCalled(_ name: String, in file: String) {
        scripts[file]?.calls[name, default: 0] += 1
    }

    /// A `fail(…)` at `line:column` of `file` ran; the call site on that line nearest before the column gets the hit.
    func failReached(file: String, line: Int, column: Int) {
        guard let record = scripts[file] else { return }
        let onLine = record.scan.failCalls.indices.filter { record.scan.failCalls[$0].line == line }
        guard let site = onLine.last(where: { record.scan.failCalls[$0].column <= column }) ?? onLine.first else { return }
        scripts[file]!.failHits[site, default: 0] += 1
    }

    /// What ran, per script, in the order the scripts were first loaded.
    public func report() -> Report {
        Report(scripts: order.map { file in
            let record = scripts[file]!
            return Report.Script(
                file: file,
                functions: record.scan.functions.map { .init(name: $0.name, line: $0.line, calls: record.calls[$0.name] ?? 0) },
                failCalls: record.scan.failCalls.enumerated().map { .init(line: $1.line, column: $1.column, hits: record.failHits[$0] ?? 0) })
        })
    }

    /// A coverage report: per script, each top-level function with its call count,
    /// and each `fail(…)` call site with how often it was reached.
    public struct Report: Codable, Sendable, Equatable {
        public var scripts: [Script]

        public struct Script: Codable, Sendable, Equatable {
            public var file: String
            public var functions: [Function]
            public var failCalls: [FailCall]

            public struct Function: Codable, Sendable, Equatable {
                public var name: String
                public var line: Int
                public var calls: Int
            }

            public struct FailCall: Codable, Sendable, Equatable {
                public var line: Int
                public var column: Int
                public var hits: Int
            }
        }

        /// Human-readable: a line per script with its totals, then what never ran.
        ///
        /// ```
        /// rules/Orders.js: functions 4/5 ran, fail() calls 5/6 reached
        ///   never ran: beforeDelete (line 27)
        ///   never reached: fail at line 29:9
        /// ```
        public var text: String {
            var lines: [String] = []
            for script in scripts {
                let ran = script.functions.filter { $0.calls > 0 }.count
                let reached = script.failCalls.filter { $0.hits > 0 }.count
                lines.append("\(script.file): functions \(ran)/\(script.functions.count) ran, fail() calls \(reached)/\(script.failCalls.count) reached")
                let idle = script.functions.filter { $0.calls == 0 }
                if !idle.isEmpty { lines.append("  never ran: " + idle.map { "\($0.name) (line \($0.line))" }.joined(separator: ", ")) }
                let missed = script.failCalls.filter { $0.hits == 0 }
                if !missed.isEmpty { lines.append("  never reached: " + missed.map { "fail at line \($0.line):\($0.column)" }.joined(separator: ", ")) }
            }
            let functions = scripts.flatMap(\.functions), fails = scripts.flatMap(\.failCalls)
            lines.append("total: functions \(functions.filter { $0.calls > 0 }.count)/\(functions.count) ran, fail() calls \(fails.filter { $0.hits > 0 }.count)/\(fails.count) reached")
            return lines.joined(separator: "\n")
        }
    }
}

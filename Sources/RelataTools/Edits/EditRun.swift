import Relata
import RelataScript

/// Edits made as a user makes them, through the tables' rules, and then applied (or
/// validated): what became of each — the verdicts `relata run` and `relata apply` print.
///
/// ```swift
/// var run = EditRun(edits: try Edit.list(contentsOf: editsFile), on: adapter.tables)
/// run.record(try adapter.applyChanges(for: adapter.tables))
/// print(run.report().text(schema: "PCTrade"))
/// ```
public struct EditRun {
    /// The verdicts, and how many of each.
    public struct Report: Encodable, Sendable {
        public var verdicts: [EditVerdict]
        public var summary: [String: Int]

        /// The report as `relata run` prints it.
        public func text(schema: String) -> String {
            var lines = ["\(schema): \(verdicts.count) edit\(verdicts.count == 1 ? "" : "s")"]
            for verdict in verdicts { lines += verdict.textLines }
            let order: [EditVerdict.Verdict] = [.applied, .validated, .pending, .undone, .refused, .failed]
            lines.append(order.compactMap { kind in summary[kind.rawValue].map { "\($0) \(kind.rawValue)" } }.joined(separator: ", "))
            return lines.joined(separator: "\n")
        }
    }

    /// What became of one edit.
    public struct EditVerdict: Encodable, Sendable, Equatable {
        public enum Verdict: String, Encodable, Sendable {
            /// Passed the row rules and the apply.
            case applied
            /// Passed the row rules and the apply's validation; not sent (`--validate-only`).
            case validated
            /// Passed the row rules; not applied (`--no-apply`).
            case pending
            /// A later edit deleted this new row before it was stored: nothing of it is stored.
            case undone
            /// Refused when made: a row rule failed or a value was wrong.
            case refused
            /// Failed at the apply: a delta or transaction rule, the update rule, or the data source.
            case failed
        }
        public var index: Int
        public var edit: String
        public var row: String?
        public var verdict: Verdict
        /// Why it did not pass: a rule's refusal, a broken rule, a wrong value or a key (nil when it passed).
        public var kind: FailureKind?
        public var message: String?
        public var location: String?
        public var event: String?
        /// The row's calculated and lookup values after the rules.
        public var values: [String: JSONValue]?

        var textLines: [String] {
            let mark = [.applied, .validated, .pending, .undone].contains(verdict) ? "✔" : "✘"
            var head = "\(String(index).leftPadded(to: 3)) \(mark) \(edit)"
            if let row { head += " → \(row)" }
            head += "  \(verdict.rawValue)"
            if kind == .ruleError {
                // A broken rule reads differently from a refusal: the rule needs fixing, not the data.
                head += verdict == .refused || verdict == .failed ? ": a rule is broken" : ", but a rule is broken"
                if let event { head += " (error in \(event)" + (location.map { " at \($0)" } ?? "") + ")" }
            } else if verdict == .refused || verdict == .failed {
                if let event { head += " by \(event)" }
                if let location { head += " at \(location)" }
            }
            var lines = [head]
            if let message { lines.append("      \(message)") }
            if let values, !values.isEmpty {
                lines.append("      " + values.keys.sorted().map { "\($0) = \(values[$0]!.shown)" }.joined(separator: ", "))
            }
            return lines
        }
    }

    private var verdicts: [EditVerdict] = []
    /// The rows the edits made, with their verdict's position and change id; no change id for
    /// the delete of a new row, which leaves nothing to store (it passes with the apply).
    private var madeRows: [(verdict: Int, row: DataTableRow, table: String, changeId: Int?)] = []

    /// Makes the edits on tables whose rules are attached; an edit a row rule or a value
    /// refuses is a ``EditVerdict/Verdict/refused`` verdict, the others are pending.
    ///
    /// The edits are made in one batch of the tables (``DataTable/performBatchUpdates(on:_:)``):
    /// each edit's rules run as it is made, nested in one entry into JavaScript, as a data
    /// server replays a client's edits.
    ///
    /// - Parameter progress: called after each edit with its summary.
    /// - Throws: nothing an edit does; only errors that stop the run.
    public init(edits: [Edit], on tables: [DataTable], progress: ((String) -> Void)? = nil) {
        self = DataTable.performBatchUpdates(on: tables) { EditRun(making: edits, on: tables, progress: progress) }
    }

    private init(making edits: [Edit], on tables: [DataTable], progress: ((String) -> Void)?) {
        var aliases: [String: DataTableRow] = [:]
        for (offset, edit) in edits.enumerated() {
            var verdict = EditVerdict(index: offset + 1, edit: edit.summary, verdict: .pending)
            do {
                let row = try edit.perform(on: tables, aliases: &aliases)
                if row.isInTable {
                    verdict.row = row.label
                    madeRows.append((verdicts.count, row, row.table.name, row.changeId))
                } else {
                    undo(row, deletedBy: offset + 1)
                    madeRows.append((verdicts.count, row, row.table.name, nil))
                }
            } catch let error as ScriptError {
                verdict.verdict = .refused
                verdict.kind = FailureKind(error)
                verdict.message = error.message
                verdict.location = error.location
                verdict.event = error.event
            } catch let error as RelataError {
                verdict.verdict = .refused
                verdict.kind = error.code == .constraintViolation ? .constraint : .invalidValue
                verdict.message = "\(error)"
            } catch {
                verdict.verdict = .refused
                verdict.kind = .storeError
                verdict.message = "\(error)"
            }
            verdicts.append(verdict)
            progress?(edit.summary)
        }
    }

    /// A new row's delete removed it before it was stored: the edits that made and changed it are undone.
    private mutating func undo(_ row: DataTableRow, deletedBy deleting: Int) {
        for made in madeRows where made.row === row {
            verdicts[made.verdict].verdict = .undone
            verdicts[made.verdict].message = "edit \(deleting) deleted this new row before it was stored"
        }
        madeRows.removeAll { $0.row === row }
    }

    /// Records what an apply (or a validation) made of the edits' changes: a failed change
    /// fails its edit; a resolved one gets `passing`.
    public mutating func record(_ deltas: [Delta], passing: EditVerdict.Verdict = .applied) {
        var outcomes: [String: DeltaChange] = [:]
        for delta in deltas { for change in delta.changes { outcomes["\(delta.tableName.lowercased())/\(change.changeId)"] = change } }
        for made in madeRows {
            guard let changeId = made.changeId else {
                verdicts[made.verdict].verdict = passing
                continue
            }
            guard let change = outcomes["\(made.table.lowercased())/\(changeId)"] else { continue }
            if change.status == .failed {
                verdicts[made.verdict].verdict = .failed
                verdicts[made.verdict].kind = change.failure?.kind ?? .refusal
                verdicts[made.verdict].message = change.message
                verdicts[made.verdict].location = change.failure?.location
                verdicts[made.verdict].event = change.failure?.event
            } else if change.status == .resolved {
                verdicts[made.verdict].verdict = passing
            }
        }
    }

    /// The verdicts, with each row's calculated and lookup values as they are now.
    public func report() -> Report {
        var verdicts = self.verdicts
        for made in madeRows {
            let row = made.row
            guard row.isInTable, row.rowState != .deleted else { continue }
            verdicts[made.verdict].row = row.label
            var values: [String: JSONValue] = [:]
            for name in row.table.virtualFieldNames {
                do {
                    values[name] = JSONValue(try row.value(forKey: name))
                } catch {
                    // A calculated field that throws, returns the wrong type or runs away is a broken rule on this edit.
                    values[name] = .null
                    verdicts[made.verdict].kind = verdicts[made.verdict].kind ?? .ruleError
                    verdicts[made.verdict].message = [verdicts[made.verdict].message, "\(error)"]
                        .compactMap { $0 }.joined(separator: "\n      ")
                }
            }
            verdicts[made.verdict].values = values
        }
        var summary: [String: Int] = [:]
        for verdict in verdicts { summary[verdict.verdict.rawValue, default: 0] += 1 }
        return Report(verdicts: verdicts, summary: summary)
    }
}

extension JSONValue {
    /// As a person reads it in the text output.
    var shown: String {
        switch self {
        case .string(let text): return "\"\(text)\""
        case .null: return "NULL"
        case .number(let number): return number == number.rounded() && abs(number) < 1e15 ? String(Int64(number)) : String(number)
        case .decimal(let value): return value.description
        case .integer(let value): return String(value)
        case .bool(let value): return String(value)
        case .array, .object: return "…"
        }
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}

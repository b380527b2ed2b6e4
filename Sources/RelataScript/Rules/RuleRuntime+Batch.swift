internal import CJavaScriptCore
import Foundation
import Relata

/// Rules over many rows with one call into JavaScript per chunk (see ``BatchCursor``).
extension RuleRuntime {
    /// Rows per call into JavaScript: the CPU time limit applies to each call.
    static let chunkSize = 65_536

    /// What a batch run found: failures by row index (each with its row), and the values rules set.
    struct BatchOutcome {
        var failures: [Int: RuleViolation] = [:]
        var writes: [Int: [String: Value]] = [:]
    }

    /// Runs `events` (in order) of one script for every row, each row with its own verdict.
    func runBatch(_ events: [RuleEvent], in script: CompiledScript, table: DataTable, rows: RowSet,
                  withOriginals: Bool) throws -> BatchOutcome {
        let events = events.map(\.handlerName)
        let present = events.filter { script.handler($0) != nil }
        guard !present.isEmpty, !rows.isEmpty else { return BatchOutcome() }
        let context = script.context
        let cursor = try BatchCursor(context: context, table: table, rows: rows, source: script.script.source,
                                     withOriginals: withOriginals, pool: sharedArrays)
        let failures = context.makeArray()
        JSValueProtect(context.ref, failures)
        defer { JSValueUnprotect(context.ref, failures) }
        let groupFailures = try context.helper("groupFailures")
        let each = try driver(calling: present, in: context)
        var outcome = BatchOutcome()
        var start = 0
        var alone = false
        while start < rows.count {
            let end = alone ? start + 1 : min(start + Self.chunkSize, rows.count)
            do {
                _ = try context.call(each, cursor.loopArguments + [JSValueMakeNumber(context.ref, Double(start)),
                                                                   JSValueMakeNumber(context.ref, Double(end)), failures])
                start = end
                alone = false
            } catch var error as ScriptError where error.kind == .timeLimitExceeded {
                // The cursor says which row was running when the limit struck. A row that started
                // the call had the whole limit to itself: it is the runaway. A later row may only
                // have had what its chunk left, so it runs again alone, with a limit of its own.
                let index = max(cursor.currentIndex(), start)
                if index == start {
                    error.event = events.joined(separator: "/")
                    outcome.failures[index] = violation(error, table: table, row: rows[index])
                    start = index + 1
                    alone = false
                } else {
                    start = index
                    alone = true
                }
            }
        }
        // Rows failing at one place with one message are described alike (the stack too): each
        // distinct description is read once however many rows share it, and each failed row comes
        // back as two numbers in a shared array (its index, its description's).
        let failureCount = context.length(of: failures) / 2
        if failureCount > 0 {
            let pairs = sharedArrays.take(Double.self, count: 2 * failureCount, in: context)
            defer { sharedArrays.recycle([pairs], context: context) }
            let distinct = try context.call(groupFailures, [failures, pairs.array])
            let descriptions = JSValueToObject(context.ref, distinct, nil).map { array in
                (0..<context.length(of: array)).map { JSString.string(of: context.element($0, of: array), in: context.ref) ?? "" }
            } ?? []
            let errors = descriptions.map { description in
                var error = script.locatingFailCall(ExceptionDescription(described: description).error(file: script.script.fileName))
                error.event = Self.event(in: error.stack, among: events) ?? events.joined(separator: "/")
                return error
            }
            for pair in 0..<failureCount {
                guard let index = Int(exactly: pairs.buffer[2 * pair]), rows.indices.contains(index),
                      let described = Int(exactly: pairs.buffer[2 * pair + 1]), errors.indices.contains(described) else { continue }
                outcome.failures[index] = violation(errors[described], table: table, row: rows[index])
            }
        }
        outcome.writes = cursor.writes(excluding: Set(outcome.failures.keys))
        return outcome
    }

    /// Computes a calculated field for every row in one go.
    func mapBatch(_ calculation: Calculation, table: DataTable, rows: RowSet, type: DataType, field: String) throws -> [Value] {
        guard !rows.isEmpty else { return [] }
        let (context, function, _) = try calculation.resolve()
        let source = (script(forTable: table.name)?.script.source ?? "") + "\n" + calculation.function
        let cursor = try BatchCursor(context: context, table: table, rows: rows, source: source, withOriginals: false,
                                     pool: sharedArrays)
        let numeric = BatchCursor.kind(of: type) != .slow
        let output = numeric ? sharedArrays.take(Double.self, count: rows.count, in: context) : nil
        defer { if let output { sharedArrays.recycle([output], context: context) } }
        let plain = context.makeArray()
        let odd = context.makeArray()
        JSValueProtect(context.ref, plain)
        JSValueProtect(context.ref, odd)
        defer {
            JSValueUnprotect(context.ref, plain)
            JSValueUnprotect(context.ref, odd)
        }
        let map = try mapLoop(in: context)
        var start = 0
        while start < rows.count {
            let end = min(start + Self.chunkSize, rows.count)
            do {
                _ = try context.call(map, [function] + cursor.loopArguments
                                     + [JSValueMakeNumber(context.ref, Double(start)), JSValueMakeNumber(context.ref, Double(end)),
                                        output?.array ?? plain, odd, JSValueMakeBoolean(context.ref, numeric)])
            } catch var error as ScriptError {
                // The table names itself and the field; the row is known only here.
                error.row = rows[cursor.currentIndex()].label
                throw error
            }
            start = end
        }
        var values: [Value]
        if let output {
            let kind = BatchCursor.kind(of: type)
            values = output.buffer.prefix(rows.count).map { BatchCursor.value($0, kind: kind == .integer ? .number : kind) }
        } else {
            values = try (0..<rows.count).map { index in try context.value(from: context.element(index, of: plain), for: type) }
        }
        let oddCount = context.length(of: odd)
        for pair in stride(from: 0, to: oddCount - 1, by: 2) {
            guard let index = context.index(from: context.element(pair, of: odd), count: values.count) else { continue }
            values[index] = try context.value(from: context.element(pair + 1, of: odd), for: type)
        }
        return values
    }

    /// A loop that runs the handlers for rows `start..<end`, generated once per scope and
    /// list of handlers: calling them by name lets the JIT inline them into the loop.
    private func driver(calling events: [String], in context: ScriptContext) throws -> JSObjectRef {
        // A handler that returns a promise is refused, as row by row (see `RuleRuntime.asyncHandler`).
        let calls = events.map { event in
            "{ const r = \(event)(row, old); if (r !== null && typeof r === 'object' && typeof r.then === 'function') "
                + "throw relata.error(\(RuleRuntime.asyncHandler(event).message.scriptLiteral)); }"
        }.joined(separator: " ")
        // The rows run in a function without a `try`: a failure unwinds out of it to the driver,
        // which notes it and calls the loop again from the next row. A `try` inside the loop made
        // each failure leave the optimized loop, and the rows after it ran slower until it was entered again.
        return try context.generated("each|\(events.joined(separator: ","))") { """
            (function () {
                const rows = function (row, old, at, start, end) {
                    for (let i = start; i < end; i++) {
                        at(i);
                        \(calls)
                    }
                };
                return function (row, old, at, index, start, end, failures) {
                    let i = start;
                    while (i < end) {
                        try { rows(row, old, at, i, end); i = end; }
                        catch (error) { i = index(); failures.push(i, relata.describe(error)); i++; }
                    }
                };
            })()
            """ }
    }

    /// The loop that computes a calculated field for rows `start..<end`.
    private func mapLoop(in context: ScriptContext) throws -> JSObjectRef {
        try context.generated("map") { """
            function (fn, row, old, at, index, start, end, out, odd, numeric) {
                for (let i = start; i < end; i++) {
                    at(i);
                    const v = fn(row);
                    if (!numeric) out[i] = v;
                    else if (typeof v === 'number') out[i] = v;
                    else if (v === null || v === undefined) out[i] = NaN;
                    else { out[i] = NaN; odd.push(i, v); }
                }
            }
            """ }
    }

    /// A row's failure, its error naming the table and the row.
    private func violation(_ error: ScriptError, table: DataTable, row: DataTableRow) -> RuleViolation {
        var error = error
        error.table = table.name
        error.row = row.label
        return RuleViolation(row: row, error: error)
    }

    /// The handler a stack runs in: the innermost frame whose function is one of `events`.
    static func event(in stack: String?, among events: [String]) -> String? {
        for frame in (stack ?? "").parts(separatedBy: "\n") {
            guard let at = frame.firstIndex(of: "@") else { continue }
            let name = String(frame[..<at])
            if events.contains(name) { return name }
        }
        return nil
    }
}

extension RuleRuntime {
    /// Steps in a row from which fewer are run one entry each: a block's entry costs a
    /// function object, more than the limit's arming it saves on a few calls.
    static let stepsWorthOneEntry = 32

    /// Runs `count` steps whose rules fire one call each (a server's replay of many edits)
    /// with those calls nested in one entry into JavaScript: each call keeps a time limit of
    /// its own, without the arming JavaScriptCore does on every entry
    /// (``VirtualMachine/enteredOnce(in:steps:_:)``). Fewer than ``stepsWorthOneEntry`` run as they are.
    func inOneEntry(steps count: Int, _ step: (Int) -> Void) {
        guard count >= Self.stepsWorthOneEntry else {
            for index in 0..<count { step(index) }
            return
        }
        engine.machine.enteredOnce(in: engine.context, steps: count, step)
    }
}

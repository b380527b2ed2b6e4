internal import CJavaScriptCore
import Foundation
import Relata

/// Rules over many rows with one call into JavaScript per chunk (see ``BatchCursor``).
extension RuleHost {
    /// Rows per call into JavaScript: the CPU time limit applies to each call.
    static let chunkSize = 65_536

    /// What a batch run found: failures by row index, and the values rules set.
    struct BatchOutcome {
        var failures: [Int: ScriptError] = [:]
        var writes: [Int: [String: Value]] = [:]
    }

    /// Runs `events` (in order) of one script for every row, each row with its own verdict.
    func runBatch(_ events: [String], in script: CompiledScript, table: DataTable, rows: RowSet,
                  withOriginals: Bool) throws -> BatchOutcome {
        let present = events.filter { script.handler($0) != nil }
        guard !present.isEmpty, !rows.isEmpty else { return BatchOutcome() }
        let context = script.context
        let cursor = try BatchCursor(context: context, table: table, rows: rows, source: script.script.source,
                                     withOriginals: withOriginals, pool: sharedArrays, classes: cursorClasses)
        let failures = context.makeArray([])
        JSValueProtect(context.ref, failures)
        defer { JSValueUnprotect(context.ref, failures) }
        let each = try driver(calling: present, in: context)
        var outcome = BatchOutcome()
        var start = 0
        while start < rows.count {
            let end = min(start + Self.chunkSize, rows.count)
            do {
                _ = try context.call(each, [cursor.cursor, cursor.oldCursor ?? JSValueMakeNull(context.ref),
                                            JSValueMakeNumber(context.ref, Double(start)), JSValueMakeNumber(context.ref, Double(end)),
                                            failures])
                start = end
            } catch var error as ScriptError where error.kind == .timeLimitExceeded {
                // The cursor says which row was running when the limit struck; go on after it.
                let index = Int(JSValueToNumber(context.ref, context.property("i", of: cursor.cursor), nil))
                error.event = events.joined(separator: "/")
                outcome.failures[index] = decorate(error, table: table, row: rows[index])
                start = index + 1
            }
        }
        // All failures come back as one string (`index U+0003 description`, separated by U+0002):
        // one crossing instead of several per failure.
        let joined = try context.call(context.globalFunction(named: "__relataJoinFailures"), [failures])
        let text = JSString.string(of: joined, in: context.ref) ?? ""
        for entry in text.parts(separatedBy: "\u{2}") where !entry.isEmpty {
            guard let separator = entry.firstIndex(of: "\u{3}"), let index = Int(entry[..<separator]) else { continue }
            var error = ExceptionDescription(described: String(entry[entry.index(after: separator)...]))
                .error(file: script.script.fileName)
            error.event = Self.event(in: error.stack, among: events) ?? events.joined(separator: "/")
            outcome.failures[index] = decorate(error, table: table, row: rows[index])
        }
        outcome.writes = cursor.writes(excluding: Set(outcome.failures.keys))
        return outcome
    }

    /// Computes a calculated field for every row in one go.
    func mapBatch(_ calculation: Calculation, table: DataTable, rows: RowSet, type: DataType, field: String) throws -> [Value] {
        guard !rows.isEmpty else { return [] }
        let context = calculation.context
        let source = (script(forTable: table.name)?.script.source ?? "") + "\n" + (JSString.string(of: calculation.function, in: context.ref) ?? "")
        let cursor = try BatchCursor(context: context, table: table, rows: rows, source: source, withOriginals: false,
                                     pool: sharedArrays, classes: cursorClasses)
        let numeric = BatchCursor.kind(of: type) != .slow
        let output = numeric ? sharedArrays.take(Double.self, count: rows.count, in: context) : nil
        defer { if let output { sharedArrays.recycle([output], context: context) } }
        let plain = context.makeArray([])
        let odd = context.makeArray([])
        JSValueProtect(context.ref, plain)
        JSValueProtect(context.ref, odd)
        defer {
            JSValueUnprotect(context.ref, plain)
            JSValueUnprotect(context.ref, odd)
        }
        let map = try context.globalFunction(named: "__relataMap")
        var start = 0
        while start < rows.count {
            let end = min(start + Self.chunkSize, rows.count)
            do {
                _ = try context.call(map, [calculation.function, cursor.cursor, JSValueMakeNumber(context.ref, Double(start)),
                                           JSValueMakeNumber(context.ref, Double(end)), output?.array ?? plain, odd,
                                           JSValueMakeBoolean(context.ref, numeric)])
            } catch var error as ScriptError {
                let index = Int(JSValueToNumber(context.ref, context.property("i", of: cursor.cursor), nil))
                error.event = "calculated field \(field)"
                throw decorate(error, table: table, row: rows[min(index, rows.count - 1)])
            }
            start = end
        }
        var values: [Value]
        if let output {
            let kind = BatchCursor.kind(of: type)
            values = output.buffer.prefix(rows.count).map { BatchCursor.value($0, kind: kind == .integer ? .number : kind) }
        } else {
            values = try (0..<rows.count).map { index in
                try context.value(from: JSObjectGetPropertyAtIndex(context.ref, plain, UInt32(index), nil)!, for: type)
            }
        }
        let oddCount = Int(JSValueToNumber(context.ref, context.property("length", of: odd), nil))
        for pair in stride(from: 0, to: oddCount, by: 2) {
            let index = Int(JSValueToNumber(context.ref, JSObjectGetPropertyAtIndex(context.ref, odd, UInt32(pair), nil), nil))
            values[index] = try context.value(from: JSObjectGetPropertyAtIndex(context.ref, odd, UInt32(pair + 1), nil)!, for: type)
        }
        return values
    }

    /// A loop that runs the handlers for rows `start..<end`, generated once per scope and
    /// list of handlers: calling them by name lets the JIT inline them into the loop.
    private func driver(calling events: [String], in context: ScriptContext) throws -> JSObjectRef {
        let key = "\(ObjectIdentifier(context))|each|\(events.joined(separator: ","))"
        if let cached = driverCache[key] { return cached }
        let calls = events.map { "\($0)(row, old);" }.joined(separator: " ")
        let source = """
            (function (row, old, start, end, failures) {
                for (let i = start; i < end; i++) {
                    row.i = i;
                    if (old !== null) old.i = i;
                    try { \(calls) } catch (error) { failures.push(i, __relataDescribe(error)); }
                }
            })
            """
        let function = try context.compileFunction(source, fileName: ScriptContext.bootstrapFile, line: 1)
        driverCache[key] = function
        return function
    }

    /// The cursor classes for a table in a script scope, generated once.
    private func cursorClasses(table: DataTable, fastFields: [(name: String, kind: BatchCursor.Kind)],
                               context: ScriptContext) throws -> (row: JSObjectRef, old: JSObjectRef) {
        let key = "\(ObjectIdentifier(context))|\(table.name)|\(fastFields.map(\.name).joined(separator: ","))"
        if let cached = cursorClassCache[key] { return cached }
        let source = BatchCursor.classSource(table: table, fastFields: fastFields)
        let pair = try context.evaluate(source, fileName: ScriptContext.bootstrapFile, line: 1)
        guard let array = JSValueToObject(context.ref, pair, nil),
              let row = JSValueToObject(context.ref, JSObjectGetPropertyAtIndex(context.ref, array, 0, nil), nil),
              let old = JSValueToObject(context.ref, JSObjectGetPropertyAtIndex(context.ref, array, 1, nil), nil) else {
            throw ScriptError(.runtime, "could not build the row cursor of table \(table.name)")
        }
        context.protect(row)
        context.protect(old)
        cursorClassCache[key] = (row, old)
        return (row, old)
    }

    private func decorate(_ error: ScriptError, table: DataTable, row: DataTableRow) -> ScriptError {
        var error = error
        error.table = table.name
        error.row = row.label
        return error
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

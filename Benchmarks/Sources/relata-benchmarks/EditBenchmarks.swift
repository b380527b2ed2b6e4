// Editing and validating on the client (issue 29, target 2): 100,000 rows of the client
// benchmark's `Lines` table, each given a new quantity while `beforeUpdate(row, old)` runs,
// then the check before an apply (`validateApply`: the delta rule over every change, foreign
// keys) — beside two floors measured in the same run: the same edits with the rules off
// (the table's own bookkeeping), and the same rule called from a JavaScript loop on plain
// objects (what JavaScript itself costs).
import Foundation
import Relata
import RelataScript

/// The floor: the rule run by JavaScript on plain objects, one call per row, nothing from Swift.
private let editFloorScript = """
    function floorRun(n) {
        const rows = new Array(n), olds = new Array(n);
        for (let i = 0; i < n; i++) {
            olds[i] = Object.freeze({ ItemId: i + 1, Name: 'Item ' + (i + 1), Quantity: i % 50 + 1, UnitPrice: (i % 1000) / 10 + 1 });
            rows[i] = { ItemId: i + 1, Name: 'Item ' + (i + 1), Quantity: i % 50 + 1, UnitPrice: (i % 1000) / 10 + 1 };
        }
        const start = Date.now();
        for (let i = 0; i < n; i++) {
            rows[i].Quantity = rows[i].Quantity + 1;
            beforeUpdate(rows[i], olds[i]);
        }
        return Date.now() - start;
    }
    """

func runEditBenchmarks(count: Int) throws {
    print("Relata client editing — \(count) rows of Lines, beforeUpdate(row, old) as each row changes; then validateApply")
    let schema = try SchemaDefinition(name: "Bench", tables: [
        TableDefinition(name: "Lines", fields: ItemTable.fields, script: RuleScript(ItemTable.linesRules, fileName: "lines.js")),
    ])
    func freshAdapter() throws -> (LocalDataAdapter, DataTable) {
        let adapter = try LocalDataAdapter(schema: schema, tables: [try ItemTable.table(count, name: "Lines")], logger: quietLogger)
        return (adapter, adapter.table(named: "Lines")!)
    }
    let edit = ItemTable.incrementQuantities(of:)
    let profile = ProcessInfo.processInfo.environment["RELATA_PROFILE"]

    if profile == "validate" {   // for `perf record`: only the check before an apply, again and again
        let (adapter, table) = try freshAdapter()
        try edit(table)
        for _ in 0..<10 {
            let start = ContinuousClock.now, cpu = processCPUSeconds()
            _ = try adapter.validateApply(for: [table])
            progress("validated: \(milliseconds((ContinuousClock.now - start).seconds)), CPU \(milliseconds(processCPUSeconds() - cpu))")
        }
        return
    }

    // Each round edits a fresh table, so every edit is a row's first (as in the server benchmark).
    var tables: [(LocalDataAdapter, DataTable)] = try (0..<3).map { _ in try freshAdapter() }
    let withRules = try measure(repetitions: 3) {
        let (adapter, table) = tables.removeLast()
        try withExtendedLifetime(adapter) { try edit(table) }   // the adapter holds the rules
    }
    // The same edits as one batch of updates (DataTable.performBatchUpdates): observers are told
    // once at the end instead of twice per edit — how an import or a bulk change is written.
    tables = try (0..<3).map { _ in try freshAdapter() }
    let batched = try measure(repetitions: 3) {
        let (adapter, table) = tables.removeLast()
        try withExtendedLifetime(adapter) { try table.performBatchUpdates { try edit(table) } }
    }
    if profile == "edit" || profile == "batch" {   // for `perf record`: edits one by one, or in one batch
        for _ in 0..<10 {
            let (adapter, table) = try freshAdapter()
            if profile == "batch" {
                try withExtendedLifetime(adapter) { try table.performBatchUpdates { try edit(table) } }
            } else {
                try withExtendedLifetime(adapter) { try edit(table) }
            }
        }
        return
    }
    tables = try (0..<3).map { _ in try freshAdapter() }
    let withoutRules = try measure(repetitions: 3) {
        let (adapter, table) = tables.removeLast()
        try withExtendedLifetime(adapter) { try table.withoutRules { try edit(table) } }
    }

    // The same edits after the table was once observed: the observation's weak reference to the
    // table gives it a side table, which sends every retain and release of it down the slow path.
    tables = try (0..<3).map { _ in try freshAdapter() }
    let onceObserved = try measure(repetitions: 3) {
        let (adapter, table) = tables.removeLast()
        table.observe { _ in }.cancel()
        try withExtendedLifetime(adapter) { try table.withoutRules { try edit(table) } }
    }

    // What the rules' machinery costs with no rule work: the same edits with an empty beforeUpdate.
    let emptySchema = try SchemaDefinition(name: "Bench", tables: [
        TableDefinition(name: "Lines", fields: ItemTable.fields, script: RuleScript("function beforeUpdate(row, old) {}", fileName: "lines.js")),
    ])
    tables = try (0..<3).map { _ in
        let adapter = try LocalDataAdapter(schema: emptySchema, tables: [try ItemTable.table(count, name: "Lines")], logger: quietLogger)
        return (adapter, adapter.table(named: "Lines")!)
    }
    let emptyRule = try measure(repetitions: 3) {
        let (adapter, table) = tables.removeLast()
        try withExtendedLifetime(adapter) { try edit(table) }
    }
    if profile == "empty" {
        for _ in 0..<10 {
            let adapter = try LocalDataAdapter(schema: emptySchema, tables: [try ItemTable.table(count, name: "Lines")], logger: quietLogger)
            try edit(adapter.table(named: "Lines")!)
        }
        return
    }

    // What entering JavaScriptCore costs, whatever Relata does around it: an empty function
    // called once per row through the public engine (its time limit armed, as the rules' is),
    // and alone the CPU-time clock its watchdog reads on every entry.
    let bare = try ScriptEngine(timeLimit: .seconds(60))
    _ = try bare.evaluate("function empty() {}", fileName: "empty.js")
    let bareCalls = try measure(repetitions: 3) {
        for _ in 0..<count { try bare.call("empty") }
    }
    let cpuClock = measure(repetitions: 3) {
        var time = timespec()
        for _ in 0..<count { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time) }
    }

    let (adapter, table) = try freshAdapter()
    try edit(table)
    var passed = 0
    let validate = try measure(repetitions: 3) {
        passed = try adapter.validateApply(for: [table]).flatMap(\.changes).filter { $0.status == .resolved }.count
    }
    precondition(passed == count, "\(passed) of \(count) changes passed")

    // The floor runs in an engine of its own, with the same rule source (no row fails it).
    let engine = try ScriptEngine(timeLimit: .seconds(60))
    _ = try engine.evaluate(ItemTable.linesRules + "\n" + editFloorScript, fileName: "floor.js")
    var floors: [Double] = []
    for _ in 0..<5 {
        floors.append((try engine.call("floorRun", [.integer(Int64(count))]).doubleValue ?? 0) / 1000)
    }
    let floor = floors.min()!   // the best of several runs: JavaScriptCore's tiers make it bimodal

    func perRow(_ seconds: Double) -> String { String(format: "%.2f µs", seconds / Double(count) * 1e6) }
    print("")
    print("| client operation (\(count) rows) | Relata | per row | floor | floor per row | Relata ÷ floor |")
    print("|---|---|---|---|---|---|")
    print("| edit with beforeUpdate vs the rule called by a JavaScript loop on plain objects (best of 5) | \(milliseconds(withRules)) | \(perRow(withRules)) | \(milliseconds(floor)) | \(perRow(floor)) | \(ratio(withRules, floor)) |")
    print("| edit with beforeUpdate vs the same edits with the rules off | \(milliseconds(withRules)) | \(perRow(withRules)) | \(milliseconds(withoutRules)) | \(perRow(withoutRules)) | \(ratio(withRules, withoutRules)) |")
    print("| edit with beforeUpdate in one performBatchUpdates (observers told once) vs the rules off | \(milliseconds(batched)) | \(perRow(batched)) | \(milliseconds(withoutRules)) | \(perRow(withoutRules)) | \(ratio(batched, withoutRules)) |")
    print("| edit with the rules off, the table observed once before (a weak reference to it made) vs never observed | \(milliseconds(onceObserved)) | \(perRow(onceObserved)) | \(milliseconds(withoutRules)) | \(perRow(withoutRules)) | \(ratio(onceObserved, withoutRules)) |")
    print("| edit with an empty beforeUpdate (the rules' machinery, no rule work) vs the rules off | \(milliseconds(emptyRule)) | \(perRow(emptyRule)) | \(milliseconds(withoutRules)) | \(perRow(withoutRules)) | \(ratio(emptyRule, withoutRules)) |")
    print("| a call per row into an empty JavaScript function (ScriptEngine.call, time limit armed) | \(milliseconds(bareCalls)) | \(perRow(bareCalls)) | | | |")
    print("| … of which the watchdog's CPU-time clock (clock_gettime, CLOCK_THREAD_CPUTIME_ID) | \(milliseconds(cpuClock)) | \(perRow(cpuClock)) | | | |")
    print("| validateApply (beforeProcessDeltaChange per change, foreign keys) | \(milliseconds(validate)) | \(perRow(validate)) | | | |")

    #if canImport(CBenchmarkJavaScriptCore)
    // Where a rule call's cost lies (RuleCallFloor+Objects.swift): the same calls with nothing of
    // Relata around them, nested in one entry as a batch's edits are, the row and its original
    // values made each way; the best of 3 each (JavaScriptCore's tiers make single runs uneven).
    let rules = RuleCallFloor(script: ItemTable.linesRules)
    let ways: [(String, () -> Int)] = [
        ("two plain objects set property by property from Swift (`JSObjectMake`, four `JSObjectSetProperty` each)", { rules.run(count, inOneEntry: true) }),
        ("two objects of a class whose reads call back into Swift, a box of values each (as Relata's row objects)", { rules.runOnCallbackObjects(count) }),
        ("the values passed to a JavaScript function that makes two plain objects (a prototype that refuses misspelt names) and calls the rule", { rules.runThroughObjectsMadeInJavaScript(count) }),
        ("the values passed to a JavaScript function that wraps them in two proxies (reads, checked writes, misspelt names and `Object.keys` as on Relata's row objects) and calls the rule", { rules.runThroughProxies(count) }),
        ("… the same with what live row objects need besides: a handle to the native row (an object with a finalizer and a box) and a generation compared on each read", { rules.runThroughLiveProxies(count) }),
        ("the rows' objects made in bulk beforehand, one value set a call", { rules.runOnRowsMadeInBulk(count, inOneEntry: true) }),
    ]
    print("")
    print("| one `beforeUpdate(row, old)` call per row, nested in one entry, nothing of Relata (best of 3) | time | per row |")
    print("|---|---|---|")
    for (way, run) in ways {
        var failures = 0
        let best = times(repetitions: 3) { failures = run() }[0]
        precondition(failures == 0, "the rule failed \(failures) times: \(way)")
        print("| \(way) | \(milliseconds(best)) | \(perRow(best)) |")
    }
    #endif
}

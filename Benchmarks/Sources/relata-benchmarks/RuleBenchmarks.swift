import Foundation
import Relata
import RelataScript

/// The rule under test: a beforeUpdate validation and a calculated line total.
let ruleScript = """
    function beforeUpdate(row, old) {
        if (row.Quantity <= 0) fail('Quantity must be positive');
        if (row.UnitPrice < old.UnitPrice / 2) fail('the price fell by more than half');
    }
    function lineTotal(row) { return row.Quantity * row.UnitPrice; }

    // The floor: the same rule as a pure JavaScript loop over plain arrays.
    var q, p, op;
    function prepareFloor(n) {
        q = new Array(n); p = new Array(n); op = new Array(n);
        for (let i = 0; i < n; i++) { q[i] = (i % 50) + (i % 1000 === 0 ? -50 : 1); op[i] = 10 + (i % 90); p[i] = op[i] * (i % 700 === 0 ? 0.4 : 0.9); }
    }
    function floor(n) {
        let failures = 0;
        const totals = new Array(n);
        for (let i = 0; i < n; i++) {
            if (q[i] <= 0) failures++;
            else if (p[i] < op[i] / 2) failures++;
            totals[i] = q[i] * p[i];
        }
        return failures;
    }

    // The rule's own floors: what any engine that runs these two functions must do — call them
    // once per row (each row gets its own verdict, so a failure stops only its row) — done in
    // pure JavaScript on plain objects made from the same arrays. `floorFail` throws as `fail`
    // does: an Error, named and marked.
    function floorFail(message) {
        const error = new Error(message);
        error.name = 'RuleFailure';
        error.__relataFail = true;
        throw error;
    }
    function floorRule(row, old) {
        if (row.Quantity <= 0) floorFail('Quantity must be positive');
        if (row.UnitPrice < old.UnitPrice / 2) floorFail('the price fell by more than half');
    }
    function floorTotal(row) { return row.Quantity * row.UnitPrice; }
    function callFloor(n) {
        let failures = 0;
        for (let i = 0; i < n; i++) {
            const row = { Quantity: q[i], UnitPrice: p[i] }, old = { Quantity: q[i], UnitPrice: op[i] };
            try { floorRule(row, old); } catch (error) { failures++; }
        }
        return failures;
    }
    function calculateFloor(n) {
        const totals = new Array(n);
        for (let i = 0; i < n; i++) totals[i] = floorTotal({ Quantity: q[i], UnitPrice: p[i] });
        return totals.length;
    }

    // The naive way: one call from Swift per row.
    function ruleRow(quantity, price, oldPrice) {
        const failed = quantity <= 0 || price < oldPrice / 2;
        return failed ? null : quantity * price;
    }
    """

/// beforeUpdate plus a calculated field over `count` changed rows: Relata's batch path,
/// the pure-JS floor and one Swift→JS call per row, in one run and one engine.
func runRuleBenchmarks(count: Int) throws {
    print("Relata rule benchmarks — beforeUpdate validation + calculated field over \(count) changed rows")

    let engineStart = try measure(repetitions: 5) { _ = try ScriptEngine() }
    let adapter = try LocalDataAdapter(engine: ScriptEngine(timeLimit: .seconds(30)))
    let table = try DataTable(name: "OrderDetails", fields: [
        FieldDefinition("DetailId", .integer, primaryKey: true),
        FieldDefinition("Product", .string),
        FieldDefinition("Quantity", .integer),
        FieldDefinition("UnitPrice", .float),
    ])
    func original(_ i: Int) -> [Value] {
        let id = Value.integer(Int64(i))
        let product = Value.string("P\(i % 100)")
        let quantity = Value.integer(Int64(i % 50))
        let price = Value.double(Double(10 + i % 90))
        return [id, product, quantity, price]
    }
    try table.loadRows((0..<count).lazy.map(original))
    try adapter.addTable(table)
    let compile = try measure(repetitions: 5) {
        try adapter.setScript(RuleScript(ruleScript, fileName: "OrderDetails.js"), forTable: "OrderDetails")
    }
    try adapter.addCalculatedField(name: "Total", type: .float, table: "OrderDetails", function: "lineTotal")

    // Change every row, the rules switched off (the edits arrive as a delta would).
    try table.withoutRules {
        try table.performBatchUpdates {
            for (i, row) in table.rows.enumerated() {
                let quantity: Int64 = Int64(i % 50) + (i % 1000 == 0 ? -50 : 1)
                let factor: Double = i % 700 == 0 ? 0.4 : 0.9
                let price: Double = Double(10 + i % 90) * factor
                try row.setValue(.integer(quantity), forKey: "Quantity")
                try row.setValue(.double(price), forKey: "UnitPrice")
            }
        }
    }

    var violations = 0
    if ProcessInfo.processInfo.environment["RELATA_PROFILE"] == "validate" {
        for _ in 0..<20 { violations = try adapter.validateChanges(for: table).count }
        return
    }
    if ProcessInfo.processInfo.environment["RELATA_PROFILE"] == "calculate" {
        for _ in 0..<20 { _ = try table.values(ofField: "Total") }
        return
    }
    try adapter.engine.evaluate(ruleScript, fileName: "floor.js")
    try adapter.engine.call("prepareFloor", [.integer(Int64(count))])
    var floorFailures = 0
    // The floor is bimodal (it lands on a fast or a slow mode by how the JIT and the collector
    // meet): its best of many runs is the floor, its median is shown beside it.
    let floorTimes = try times(repetitions: 15) {
        floorFailures = Int(try adapter.engine.call("floor", [.integer(Int64(count))]).integerValue ?? -1)
    }
    let floor = floorTimes[0]
    var callFailures = 0
    let callFloor = try times(repetitions: 15) {
        callFailures = Int(try adapter.engine.call("callFloor", [.integer(Int64(count))]).integerValue ?? -1)
    }[0]
    let calculateFloor = try times(repetitions: 15) { _ = try adapter.engine.call("calculateFloor", [.integer(Int64(count))]) }[0]

    // Relata's runs are timed as the floors are, best of 15 (the median beside it): its rules run
    // in the same JIT, whose modes move a run as much as the floor's.
    let validateTimes = try times(repetitions: 15) { violations = try adapter.validateChanges(for: table).count }
    var totals: [Value] = []
    let calculateTimes = try times(repetitions: 15) { totals = try table.values(ofField: "Total") }
    precondition(totals.count == count)
    let (validate, calculate) = (validateTimes[0], calculateTimes[0])
    precondition(floorFailures == violations, "the floor found \(floorFailures) failures, Relata \(violations)")
    precondition(callFailures == violations, "the rule-call floor found \(callFailures) failures, Relata \(violations)")

    // What any batch must do before its loop, whatever the loop costs: find the changed rows,
    // and hand the fields the rule reads (current and original values) to JavaScript — the
    // floor's arrays were prepared beforehand and are not counted in it.
    let read = ["Quantity", "UnitPrice"]
    let buffers = (0..<2 * read.count).map { _ in UnsafeMutableBufferPointer<Double>.allocate(capacity: count) }
    defer { for buffer in buffers { buffer.deallocate() } }
    let find = times(repetitions: 15) { _ = table.rowSets(in: [.added, .modified, .deleted]) }[0]
    let changed = table.rowSet(in: .modified)
    let handOverCurrent = try times(repetitions: 15) {
        try table.copyNumbers(ofFields: read, in: changed, into: Array(buffers.prefix(read.count)))
    }[0]
    let handOver = try handOverCurrent + times(repetitions: 15) {
        try table.copyNumbers(ofFields: read, in: changed, originals: true, into: Array(buffers.suffix(read.count)))
    }[0]

    // A calculated field's values come back to Swift as `Value`s: a million of them in fresh memory.
    let results = times(repetitions: 15) {
        let values = buffers[0].map { Value.double($0) }
        precondition(values.count == count)
    }[0]

    let rows = table.rows
    let naiveCount = min(count, 200_000)
    let naive = try measure(repetitions: 3) {
        for row in rows.prefix(naiveCount) {
            _ = try adapter.engine.call("ruleRow", [row["Quantity"], row["UnitPrice"], row.originalValue(forKey: "UnitPrice") ?? .null])
        }
    } * Double(count) / Double(naiveCount)

    // The same validation when every row passes (the usual case before an apply):
    // the rule's failures are what costs most above, a JavaScript exception and a
    // located error each.
    let passingScript = ruleScript.replacingOccurrences(of: "if (row.Quantity <= 0) fail('Quantity must be positive');",
                                                         with: "if (row.Quantity <= -1000) fail('Quantity must be positive');")
        .replacingOccurrences(of: "if (row.UnitPrice < old.UnitPrice / 2)", with: "if (row.UnitPrice < old.UnitPrice / 100)")
    try adapter.setScript(RuleScript(passingScript, fileName: "OrderDetails.js"), forTable: "OrderDetails")
    var passingViolations = -1
    let passingTimes = try times(repetitions: 15) { passingViolations = try adapter.validateChanges(for: table).count }
    let validatePassing = passingTimes[0]
    precondition(passingViolations == 0)

    let relata = validate + calculate
    // What bounds each target in this run: the rule's own call per row, and the data moved between
    // Swift and JavaScript that no batch over Swift-held rows can skip.
    let validationBound = callFloor + find + handOver
    let calculationBound = calculateFloor + handOverCurrent + results
    func perRow(_ seconds: Double) -> String { String(format: "%.1f ns", seconds * 1e9 / Double(count)) }
    print("")
    print("| run | time | per row | ÷ floor |")
    print("|---|---|---|---|")
    print("| floor: pure JS loop over plain JS arrays (best of \(floorTimes.count); median \(milliseconds(floorTimes[floorTimes.count / 2]))) "
          + "| \(milliseconds(floor)) | \(perRow(floor)) | 1.00× |")
    print("| floor: `beforeUpdate` called per row in pure JS on plain objects, each row its own verdict (best of 15) "
          + "| \(milliseconds(callFloor)) | \(perRow(callFloor)) | \(ratio(callFloor, floor)) |")
    print("| floor: `lineTotal` called per row in pure JS on plain objects (best of 15) "
          + "| \(milliseconds(calculateFloor)) | \(perRow(calculateFloor)) | \(ratio(calculateFloor, floor)) |")
    print("| finding the changed rows (`rowSets`, best of 15) | \(milliseconds(find)) | \(perRow(find)) | \(ratio(find, floor)) |")
    print("| handing \(read.count) fields over, current and original (`copyNumbers`, best of 15) | \(milliseconds(handOver)) "
          + "| \(perRow(handOver)) | \(ratio(handOver, floor)) |")
    print("| a million doubles made into a fresh `[Value]` (best of 15) | \(milliseconds(results)) | \(perRow(results)) | \(ratio(results, floor)) |")
    func median(_ times: [Double]) -> String { "median \(milliseconds(times[times.count / 2]))" }
    print("| bound for validating: the rule-call floor + finding the changed rows + handing the fields over "
          + "| \(milliseconds(validationBound)) | \(perRow(validationBound)) | \(ratio(validationBound, floor)) |")
    print("| bound for a calculated field: its call floor + handing 2 fields over (current) + a million `Value`s "
          + "| \(milliseconds(calculationBound)) | \(perRow(calculationBound)) | \(ratio(calculationBound, floor)) |")
    print("| Relata batch: `validateChanges` (\(violations) violations; best of 15, \(median(validateTimes))) "
          + "| \(milliseconds(validate)) | \(perRow(validate)) | \(ratio(validate, floor)) (\(ratio(validate, validationBound)) the bound) |")
    print("| Relata batch: `validateChanges`, every row passing (best of 15, \(median(passingTimes))) "
          + "| \(milliseconds(validatePassing)) | \(perRow(validatePassing)) | \(ratio(validatePassing, floor)) |")
    print("| Relata batch: calculated field `values(ofField:)` (best of 15, \(median(calculateTimes))) "
          + "| \(milliseconds(calculate)) | \(perRow(calculate)) | \(ratio(calculate, floor)) (\(ratio(calculate, calculationBound)) the bound) |")
    print("| Relata batch: both | \(milliseconds(relata)) | \(perRow(relata)) | \(ratio(relata, floor)) "
          + "(\(ratio(relata, validationBound + calculationBound)) the bounds) |")
    print("| naive: one Swift→JS call per row\(naiveCount < count ? " (\(naiveCount) rows, scaled)" : "") | \(milliseconds(naive)) | \(perRow(naive)) | \(ratio(naive, floor)) |")
    print("")
    print("engine start: \(milliseconds(engineStart)); script compile (a table script with its globals): \(milliseconds(compile))")
}

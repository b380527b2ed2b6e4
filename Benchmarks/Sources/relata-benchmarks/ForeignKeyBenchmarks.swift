import Foundation
import Relata

/// The foreign-key check of an apply (`DataTable.foreignKeyViolations`, what every store runs
/// before it stores) over `count / 2` deleted parent rows and `count / 2` updated child rows,
/// against the same check of a tenth of the changes, times ten: a linear check stays near 1×;
/// one that scans the changed rows per change grows with the size (it was 2.5×10⁹ steps here).
func runForeignKeyBenchmarks(count: Int) throws {
    let half = max(10, count / 2)
    print("Relata foreign-key check — \(half) parent deletes + \(half) child updates, against \(half / 10) + \(half / 10) × 10")
    let full = try foreignKeyCheckSeconds(changes: half)
    let tenth = try foreignKeyCheckSeconds(changes: half / 10)
    print("")
    print("| check | time | a tenth × 10 | ratio |")
    print("|---|---|---|---|")
    print("| \(half) deletes of parents + \(half) updates of their children's tables | \(milliseconds(full)) | \(milliseconds(tenth * 10)) | \(ratio(full, tenth * 10)) |")
}

/// The check's time over `changes` deleted parents (no child refers to them) and `changes`
/// updated children (each refers to a parent that stays).
private func foreignKeyCheckSeconds(changes: Int) throws -> Double {
    let parents = try DataTable(name: "Parents", fields: [FieldDefinition("ParentId", .integer, primaryKey: true), FieldDefinition("Name", .string)])
    try parents.loadRows((1...(2 * changes)).map { [.integer(Int64($0)), .string("parent \($0)")] })
    let children = try DataTable(name: "Children", fields: [FieldDefinition("ChildId", .integer, primaryKey: true),
                                                            FieldDefinition("ParentId", .integer), FieldDefinition("Note", .string)])
    try children.loadRows((1...changes).map { [.integer(Int64($0)), .integer(Int64($0)), .string("note")] })
    try children.addForeignKey("ParentId", references: parents, field: "ParentId")
    for key in (changes + 1)...(2 * changes) {
        guard let row = try parents.row(forPrimaryKey: .integer(Int64(key))) else { fatalError("no parent \(key)") }
        try parents.removeRow(row)
    }
    for row in children.rows { try row.setValue("changed", forKey: "Note") }
    let deltas = [try parents.makeDelta(), try children.makeDelta()]
    let committing = [ObjectIdentifier(parents): Set(deltas[0].changes.map(\.changeId)),
                      ObjectIdentifier(children): Set(deltas[1].changes.map(\.changeId))]
    var violations = 0
    let seconds = measure(repetitions: 3) {
        violations = parents.foreignKeyViolations(in: deltas[0], committing: committing).count
            + children.foreignKeyViolations(in: deltas[1], committing: committing).count
    }
    precondition(violations == 0, "the benchmark's changes break no foreign key, yet \(violations) were found")
    return seconds
}

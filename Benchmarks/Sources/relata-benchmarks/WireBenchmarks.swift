// The delta's JSON on its own (issue 29): reading and writing UpdateData's body of 100,000
// changes, against the least any reader must do — build the same deltas, value by value, from
// memory — and against Foundation's Codable.

import Foundation
import Relata

func runWireBenchmarks(count: Int) throws {
    let table = try ItemTable.table(count)
    try ItemTable.incrementQuantities(of: table)
    let deltas = [try table.makeDelta()]
    let json = try DeltaJSON.encode(deltas)
    var decoded: [Delta] = []
    let decode = try measure { decoded = try DeltaJSON.decode(json) }
    precondition(decoded == deltas, "the delta does not survive its JSON")
    let encode = try measure { _ = try DeltaJSON.encode(deltas) }
    // The floor: the same deltas built again from values already in memory — every change and
    // dictionary made anew, as a reader must — with no text to read.
    var rebuilt: [Delta] = []
    let build = measure { rebuilt = deltas.map(rebuild) }
    precondition(rebuilt == deltas)
    let foundationDecode = try measure(repetitions: 1) { _ = try JSONDecoder().decode([String: [Delta]].self, from: json) }
    let foundationEncode = try measure(repetitions: 1) { _ = try JSONEncoder().encode(["deltas": deltas]) }

    print("UpdateData's JSON: \(count) changes (\(json.count / 1024) KiB), median of 5")
    print("")
    print("| operation | DeltaJSON | the deltas built from memory | DeltaJSON ÷ that | Foundation's Codable |")
    print("|---|---|---|---|---|")
    print("| read the body | \(milliseconds(decode)) | \(milliseconds(build)) | \(ratio(decode, build)) | \(milliseconds(foundationDecode)) |")
    print("| write the body | \(milliseconds(encode)) | | | \(milliseconds(foundationEncode)) |")
}

/// A delta made anew from another: every change's values set again, name by name.
private func rebuild(_ delta: Delta) -> Delta {
    func copy(_ values: FieldValues) -> FieldValues {
        FieldValues(uniqueKeysWithValues: values.lazy.map { ($0.key, $0.value) })
    }
    return Delta(tableName: delta.tableName, keyFields: delta.keyFields, loggedFields: delta.loggedFields, changes: delta.changes.map {
        DeltaChange(changeId: $0.changeId, type: $0.type, oldValues: copy($0.oldValues), newValues: copy($0.newValues),
                    status: $0.status, message: $0.message, failure: $0.failure, refreshedValues: copy($0.refreshedValues), edits: $0.edits)
    })
}

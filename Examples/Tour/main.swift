// The five-minute tour of Relata's core, as README.md shows it.
// Run it with `Scripts/demo.sh` (or `swift run relata-tour`).
// The regions between `tour:begin` and `tour:end` are copied verbatim into README.md;
// a test fails when the two drift apart.
import Foundation
import Relata

let dataFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Data")

func section(_ title: String) { print("\n== \(title) ==") }

do {
    section("Load the example table")
    // tour:begin load
    let fields = try JSONDecoder().decode([FieldDefinition].self,
        from: Data(contentsOf: dataFolder.appendingPathComponent("Clients.fields.json")))
    let clients = try DataTable(name: "Clients", fields: fields,
        json: Data(contentsOf: dataFolder.appendingPathComponent("Clients.json")))
    print(clients)
    print("\(clients.rowCount) rows")
    // tour:end

    section("Edit rows: states and originals")
    // tour:begin edit
    let acme = try clients.row(forPrimaryKey: 1)!
    try acme.setValue("Acme Ltd", forKey: "ClientName")
    print(acme.rowState, acme["ClientName"], "was", acme.originalValue(forKey: "ClientName")!)

    let newcomer = try clients.addNewRow(values: ["ClientName": "Cyberdyne", "ClientDiscount": 0.08])
    print(newcomer.rowState, "with temporary key", newcomer["ClientId"])

    try clients.removeRow(try clients.row(forPrimaryKey: 4)!)
    print("deleted:", clients.deletedRows.map { $0["ClientName"] })
    // tour:end

    section("Bad input is refused, and nothing is lost")
    // tour:begin errors
    do {
        try acme.setValue("plenty", forKey: "ClientDiscount")
    } catch {
        print(error)   // Clients.ClientDiscount, row (ClientId=1): 'plenty' (string) is not a valid float value
    }
    print(acme["ClientDiscount"])   // still 0.05
    // tour:end

    section("Two-phase editing")
    // tour:begin twoPhase
    let globex = try clients.row(forPrimaryKey: 2)!
    try globex.edit()
    try globex.setValue("555-0200", forKey: "ContactPhone")
    try globex.discard()                 // exactly as before edit()
    try globex.edit()
    try globex.setValue(0.11, forKey: "ClientDiscount")
    try globex.post()                    // now a pending change
    print(globex.rowState, globex.changedFieldNames)
    // tour:end

    section("Filter and sort")
    // tour:begin query
    let generous = try clients.rows(where: "ClientDiscount >= :min AND ContactPhone IS NOT NULL",
                                    parameters: ["min": 0.1],
                                    sortedBy: "ClientName", using: .localizedCaseInsensitive)
    print(generous.map { $0["ClientName"].text })
    // tour:end

    section("The delta: build, process, accept")
    // tour:begin delta
    var delta = try clients.makeDelta()
    for change in delta.changes {
        print(change.changeId, change.type, change.changedFields)
    }
    // A data source processes it: here the insert gets key 9 and the update of Globex fails.
    for index in delta.changes.indices {
        switch delta.changes[index].type {
        case .insert: delta.changes[index].resolve(refreshing: ["ClientId": 9])
        case .update where delta.changes[index].oldValues["ClientId"] == 2:
            delta.changes[index].fail("discounts above 10% need approval")
        default: delta.changes[index].resolve()
        }
    }
    try clients.accept(delta)
    print(newcomer["ClientId"], newcomer.rowState)          // 9 unchanged
    print(globex.rowState, globex.failureMessage ?? "")     // modified, with the message
    print("still pending:", try clients.makeDelta().count)  // 1: the failed change, ready to retry
    // tour:end
} catch {
    print("error: \(error)")
    exit(1)
}

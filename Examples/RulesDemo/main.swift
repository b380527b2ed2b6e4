// Business rules in JavaScript on the example Clients table: edits, one of
// which a rule refuses, each with its verdict; then an apply where a delta
// rule fails one change and commits the rest. Run it with `Scripts/demo.sh`.
import Foundation
import Logging
import Relata
import RelataScript

let dataFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Data")

func verdict(_ what: String, _ edit: () throws -> Void) {
    do {
        try edit()
        print("ok      \(what)")
    } catch let error as ScriptError {
        print("refused \(what)\n        \(error)")
    } catch {
        print("error   \(what)\n        \(error)")
    }
}

do {
    let fields = try JSONDecoder().decode([FieldDefinition].self,
        from: Data(contentsOf: dataFolder.appendingPathComponent("Clients.fields.json")))
    // `log(...)` in the scripts goes to swift-log; here, to standard output.
    let adapter = try LocalDataAdapter(logger: Logger(label: "rules", factory: { StreamLogHandler.standardOutput(label: $0) }))
    let clients = try adapter.addTable(name: "Clients", fields: fields,
        json: Data(contentsOf: dataFolder.appendingPathComponent("Clients.json")),
        script: RuleScript(contentsOf: dataFolder.appendingPathComponent("Clients.js")))

    print("== Edits, checked by Clients.js as they happen ==")
    let acme = try clients.row(forPrimaryKey: 1)!
    verdict("Acme: discount 10%") { try acme.setValue(0.10, forKey: "ClientDiscount") }
    verdict("Acme: discount 40%") { try acme.setValue(0.40, forKey: "ClientDiscount") }
    verdict("Initech: remove the phone number") { try clients.row(forPrimaryKey: 3)!.setValue(.null, forKey: "ContactPhone") }
    verdict("Globex: delete") { try clients.removeRow(clients.row(forPrimaryKey: 2)!) }
    verdict("Hooli: discount 20%") { try clients.row(forPrimaryKey: 5)!.setValue(0.20, forKey: "ClientDiscount") }
    var newcomer: DataTableRow?
    verdict("new client Cyberdyne") { newcomer = try clients.addNewRow(values: ["ClientName": "Cyberdyne"]) }
    print("        Cyberdyne's discount from onNewRow: \(newcomer?["ClientDiscount"] ?? .null)")
    print("Acme's discount is still \(acme["ClientDiscount"]) (the refused 40% left no trace)")

    print("\n== Apply: delta rules, then commit ==")
    let delta = try adapter.applyChanges(for: clients)
    for change in delta.changes {
        let status = change.status == .failed ? "failed: \(change.message ?? "")" : change.status.rawValue
        print("change \(change.changeId) \(change.type.rawValue) \(change["ClientName"]?.text ?? ""): \(status)")
    }
    print("still pending after the apply: \(clients.changedRows.map { $0["ClientName"].text })")
} catch {
    print("error: \(error)")
    exit(1)
}

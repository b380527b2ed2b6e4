import Foundation
import Relata
import RelataRemote
import RelataScript

// The DataAccess pattern (seed 004) as a console app: run `relata serve` first, then
//   swift run relata-data-access            (RELATA_SERVER, RELATA_USER, RELATA_PASSWORD, DATA_ACCESS_HOME)

/// The "user": prints alerts, gives the login from the environment (demo/demo by default).
@MainActor final class ConsoleUser: DataAccessDelegate {
    func alertError(_ message: String) { print("  alert: \(message)") }
    func needLogin(after refusal: String?) async -> RemoteCredentials? {
        if let refusal { print("  login refused: \(refusal)"); return nil }
        let environment = ProcessInfo.processInfo.environment
        return RemoteCredentials(user: environment["RELATA_USER"] ?? "demo", password: environment["RELATA_PASSWORD"] ?? "demo")
    }
}

@MainActor func runApp() async -> Int32 {
    let user = ConsoleUser()
    let data = DataAccess.shared
    data.delegate = user
    guard let source = await data.loadInitialData(), let clients = data.clients, let orders = data.orders,
          let details = data.orderDetails else { return 1 }
    print("data ready from the \(source): \(clients.rowCount) clients, \(orders.rowCount) orders, \(details.rowCount) order lines")

    // An edit the server's rules refuse, refused here, before any network call.
    do {
        try clients.rows[0].setValue(0.5, forKey: "ClientDiscount")
    } catch let error as ScriptError {
        print("refused here: \(error.message) (\(error.location ?? "?"))")
    } catch {
        print("refused here: \(error)")
    }

    // A new order with a line: temporary keys until the server gives real ones.
    do {
        let order = try orders.addNewRow(values: ["ClientId": 9, "ShipAddress": "25 Main St, Dublin"])
        let line = try details.addNewRow(values: ["OrderId": order["OrderId"], "ProductId": 2, "Quantity": 1])
        print("new order \(order["OrderId"]) with line \(line["DetailId"]) (\(line["ProductName"]), \(line["LineTotal"]))")
        try data.saveData()
        print("saved to the briefcase with \(orders.changedRows.count + details.changedRows.count) pending changes")

        await finish(data.beginApplyUpdates())
        // Says what happened: a row still changed was not applied (its failure, or the alert above, says why).
        if order.isChanged || line.isChanged {
            print("not applied: order \(order["OrderId"]) is \(order.rowState)\(order.failureMessage.map { " (\($0))" } ?? ""), "
                  + "line \(line["DetailId"]) is \(line.rowState)\(line.failureMessage.map { " (\($0))" } ?? ""); the changes stay pending")
        } else {
            print("applied: order \(order["OrderId"]), line \(line["DetailId"]) refers to order \(line["OrderId"]); pending now: \(orders.hasChanges || details.hasChanges)")
        }
    } catch {
        print("the order could not be made: \(error)")
        return 1
    }

    // Someone else changes a client; our change to the same client is refused by the server only.
    do {
        let other = RemoteDataAdapter(targetURL: data.adapter.targetURL, dataService: data.adapter.dataService)
        other.credentials = data.adapter.credentials
        let theirs = try await other.getDataTable("Clients", where: "ClientId = 2")
        try theirs.rows[0].setValue("Globex Worldwide", forKey: "ClientName")
        try await other.applyChanges(for: theirs)
    } catch {
        print("the other user's change failed: \(error)")
        return 1
    }
    guard let globex = try? clients.row(forPrimaryKey: 2) else { return 1 }
    try? globex.setValue("Globex & Sons", forKey: "ClientName")
    await finish(data.beginApplyUpdates())
    print("the server refused: \(globex.failureMessage ?? "nothing"); the row keeps \(globex["ClientName"]) (\(globex.rowState))")
    return 0
}

/// Waits for a request, on the main actor, as an app's run loop would.
@MainActor func finish<Result>(_ request: AsyncRequest<Result>?) async {
    guard let request else { return }
    while !request.isDone { try? await Task.sleep(for: .milliseconds(10)) }
}

exit(await runApp())

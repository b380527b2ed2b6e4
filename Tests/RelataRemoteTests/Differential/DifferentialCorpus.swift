import Relata
import RelataTools

/// A list of edits on PCTrade, run three ways by ``DifferentialTests``, by a user of PCTrade's
/// servers (`demo` or `clerk`): offline with the session that user's login gives.
struct Scenario: Sendable, CustomStringConvertible {
    let name: String
    let edits: [Edit]
    var user = "demo"
    var description: String { name }
}

/// Edits written the way an edits file writes them.
enum Make {
    static func insert(_ table: String, _ values: [String: Edit.EditValue], as alias: String? = nil) -> Edit {
        Edit(.insert, table: table, values: values, alias: alias)
    }
    static func update(_ table: String, _ key: Int64, _ values: [String: Edit.EditValue]) -> Edit {
        Edit(.update, table: table, key: [.value(.integer(key))], values: values)
    }
    static func delete(_ table: String, _ key: Int64) -> Edit {
        Edit(.delete, table: table, key: [.value(.integer(key))])
    }
    static func int(_ value: Int64) -> Edit.EditValue { .value(.integer(value)) }
    static func number(_ value: Double) -> Edit.EditValue { .value(.number(value)) }
    static func text(_ value: String) -> Edit.EditValue { .value(.string(value)) }
    static func flag(_ value: Bool) -> Edit.EditValue { .value(.bool(value)) }
    static let null = Edit.EditValue.value(.null)
    static func ref(_ alias: String, _ field: String) -> Edit.EditValue { .reference(alias: alias, field: field) }
    /// A new order with a fixed date (`onNewRow` would stamp the time of the run, which differs by site).
    static func order(for client: Int64, as alias: String = "order") -> Edit {
        insert("Orders", ["ClientId": int(client), "OrderDate": text("2026-11-20T10:00:00Z"), "ShipAddress": text("1 Test Rd")], as: alias)
    }
    static func line(_ product: Int64, quantity: Int64 = 1, order: Edit.EditValue = ref("order", "OrderId"), discount: Double? = nil) -> Edit {
        var values: [String: Edit.EditValue] = ["OrderId": order, "ProductId": int(product), "Quantity": int(quantity)]
        if let discount { values["Discount"] = number(discount) }
        return insert("OrderDetails", values)
    }
}

/// At least 50 scenarios: inserts with temporary keys, updates, deletes, cross-table `lda`
/// checks, calculated and lookup values, delta-level and transaction rules, both update
/// rules, rule failures and type errors.
enum DifferentialCorpus {
    static let scenarios: [Scenario] = handWritten + generated

    static let handWritten: [Scenario] = {
        typealias M = Make
        return [
            Scenario(name: "the example scenario", edits: (try? Edit.list(contentsOf: PCTradeServer.packageRoot
                .appendingPathComponent("Examples/PCTrade/edits/scenario.json"))) ?? []),
            Scenario(name: "an order with a line (temporary keys)", edits: [M.order(for: 9), M.line(2)]),
            Scenario(name: "an order with three lines and a discount", edits: [M.order(for: 17), M.line(2), M.line(3, quantity: 2), M.line(5, discount: 0.1)]),
            Scenario(name: "an order without lines rolls back the apply (rollbackAll)",
                     edits: [M.order(for: 9), M.update("Clients", 2, ["ContactPhone": M.text("+1 555 0000")])]),
            Scenario(name: "an order for an inactive client", edits: [M.order(for: 13), M.line(2)]),
            Scenario(name: "an order for a client that does not exist", edits: [M.order(for: 999), M.line(2)]),
            Scenario(name: "a shipped order cannot reopen", edits: [M.update("Orders", 1, ["Status": M.text("open")])]),
            Scenario(name: "an unknown order status", edits: [M.update("Orders", 145, ["Status": M.text("lost")])]),
            Scenario(name: "an open order is confirmed", edits: [M.update("Orders", 145, ["Status": M.text("confirmed")])]),
            Scenario(name: "deleting an open order that has lines", edits: [M.delete("Orders", 145)]),
            Scenario(name: "deleting an open order with its lines", edits: [M.delete("OrderDetails", 415), M.delete("OrderDetails", 416),
                                                                           M.delete("OrderDetails", 417), M.delete("OrderDetails", 418),
                                                                           M.delete("OrderDetails", 419), M.delete("Orders", 145)]),
            Scenario(name: "deleting a shipped order", edits: [M.delete("Orders", 1)]),
            Scenario(name: "deleting a line of a shipped order", edits: [M.delete("OrderDetails", 1)]),
            Scenario(name: "deleting a line of an open order", edits: [M.delete("OrderDetails", 415)]),
            Scenario(name: "a quantity of zero", edits: [M.update("OrderDetails", 415, ["Quantity": M.int(0)])]),
            Scenario(name: "a line moved to another order", edits: [M.update("OrderDetails", 415, ["OrderId": M.int(140)])]),
            Scenario(name: "a line discount above 25%", edits: [M.update("OrderDetails", 415, ["Discount": M.number(0.3)])]),
            Scenario(name: "a line discount of 20%", edits: [M.update("OrderDetails", 415, ["Discount": M.number(0.2)])]),
            Scenario(name: "a line's product changes (lookup value)", edits: [M.update("OrderDetails", 415, ["ProductId": M.int(7)])]),
            Scenario(name: "a price up 60%", edits: [M.update("Products", 1, ["UnitPrice": M.number(1001.84)])]),
            Scenario(name: "a price up 10%", edits: [M.update("Products", 1, ["UnitPrice": M.number(688.77)])]),
            Scenario(name: "negative stock", edits: [M.update("Products", 2, ["UnitsInStock": M.int(-1)])]),
            Scenario(name: "a product of a provider that does not exist", edits: [M.update("Products", 2, ["ProviderId": M.int(999)])]),
            Scenario(name: "a product discontinued, then ordered",
                     edits: [M.update("Products", 2, ["Discontinued": M.flag(true)]), M.order(for: 9), M.line(2)]),
            Scenario(name: "a product deleted (delta rule)", edits: [M.delete("Products", 40)]),
            Scenario(name: "a new product", edits: [M.insert("Products", ["ProductName": M.text("Test Widget"), "ProviderId": M.int(1),
                                                                          "Category": M.text("Case"), "UnitPrice": M.number(9.99),
                                                                          "UnitsInStock": M.int(5), "Discontinued": M.flag(false)])]),
            Scenario(name: "a discount of 35%", edits: [M.update("Clients", 1, ["ClientDiscount": M.number(0.35)])]),
            Scenario(name: "a discount of 25%", edits: [M.update("Clients", 1, ["ClientDiscount": M.number(0.25)])]),
            Scenario(name: "a client without a name", edits: [M.update("Clients", 1, ["ClientName": M.text("  ")])]),
            Scenario(name: "a negative credit limit", edits: [M.update("Clients", 1, ["CreditLimit": M.number(-5)])]),
            Scenario(name: "a new client (onNewRow defaults)", edits: [M.insert("Clients", ["ClientName": M.text("Initrode")])]),
            Scenario(name: "a client with orders deleted", edits: [M.delete("Clients", 1)]),
            Scenario(name: "a new client and a new order in one apply", edits: [M.insert("Clients", ["ClientName": M.text("Brief")], as: "c"),
                                                                          M.order(for: 9), M.line(2)]),
            Scenario(name: "a quantity that is not a number", edits: [M.update("OrderDetails", 415, ["Quantity": M.text("many")])]),
            Scenario(name: "a field the table does not have", edits: [M.update("OrderDetails", 415, ["Colour": M.text("red")])]),
            Scenario(name: "a row that does not exist", edits: [M.update("Clients", 999, ["ClientName": M.text("Nobody")])]),
            Scenario(name: "a line for a discontinued product", edits: [M.order(for: 9), M.line(17)]),
            Scenario(name: "lines beyond the credit limit", edits: [M.order(for: 2), M.line(1), M.line(1), M.line(1)]),
            Scenario(name: "two orders, one without lines", edits: [M.order(for: 9, as: "a"), M.line(2, order: M.ref("a", "OrderId")),
                                                                     M.order(for: 17, as: "b")]),
            Scenario(name: "updates across tables in one apply", edits: [M.update("Clients", 5, ["CreditLimit": M.number(3000)]),
                                                                         M.update("Products", 3, ["UnitsInStock": M.int(10)]),
                                                                         M.update("Orders", 140, ["ShipAddress": M.text("2 New St")])]),
            Scenario(name: "a change then its row deleted", edits: [M.update("OrderDetails", 416, ["Quantity": M.int(3)]),
                                                                    M.delete("OrderDetails", 416)]),
            Scenario(name: "a required value cleared", edits: [M.update("Orders", 145, ["Status": M.null])]),
            // Order is data: a new row deleted before the apply leaves nothing, on every site.
            Scenario(name: "a new order and line deleted before the apply",
                     edits: [M.order(for: 9), M.line(2), Edit(.delete, table: "OrderDetails", key: [.value(.integer(-1))]),
                             Edit(.delete, table: "Orders", key: [M.ref("order", "OrderId")])]),
            Scenario(name: "a new order changed by reference", edits: [M.order(for: 9), M.line(2),
                                                                       Edit(.update, table: "Orders", key: [M.ref("order", "OrderId")],
                                                                            values: ["ShipAddress": M.text("3 Other Rd")])]),
            // One date: rounded to the microsecond, proleptic Gregorian, the same text everywhere.
            Scenario(name: "an order dated to a tenth of a microsecond",
                     edits: [M.insert("Orders", ["ClientId": M.int(9), "OrderDate": M.text("2026-11-20T10:00:00.1234567Z"),
                                                 "ShipAddress": M.text("1 Test Rd")], as: "order"), M.line(2)]),
            Scenario(name: "an order dated in 1200", edits: [M.update("Orders", 145, ["OrderDate": M.text("1200-06-15T12:00:00Z")])]),
            // One set of accepted values.
            Scenario(name: "a NaN discount", edits: [M.update("OrderDetails", 415, ["Discount": M.number(.nan)])]),
            Scenario(name: "a discount of -0", edits: [M.update("OrderDetails", 415, ["Discount": M.number(-0.0)])]),
            Scenario(name: "a phone number holding NUL", edits: [M.update("Clients", 1, ["ContactPhone": M.text("555\u{0}1234")])]),
            // One currency: its scale and range the same on every site (the page included).
            Scenario(name: "a price to a thousandth of a cent", edits: [M.update("Products", 1, ["UnitPrice": M.number(650.12345)])]),
            Scenario(name: "a price of 650.1 + 0.2", edits: [M.update("Products", 1, ["UnitPrice": M.number(650.1 + 0.2)])]),
            Scenario(name: "a credit limit of a quintillion", edits: [M.update("Clients", 5, ["CreditLimit": M.number(1e18)])]),
            Scenario(name: "a credit limit beyond the currency's range", edits: [M.update("Clients", 5, ["CreditLimit": M.number(1e300)])]),
            Scenario(name: "a credit limit as text with many digits", edits: [M.update("Clients", 5, ["CreditLimit": M.text("1234.56789")])]),
            // A server-only script (Orders.server.js) runs where the data is kept — offline and on the
            // server — and the client, which never has it, ends with what it stored.
            // The same session gives the same verdict on every site (Clients.js reads session.hasRole).
            Scenario(name: "a clerk raises a credit limit (a rule reading the session)",
                     edits: [M.update("Clients", 5, ["CreditLimit": M.number(9000)]), M.update("Clients", 6, ["CreditLimit": M.number(1)])],
                     user: "clerk"),
            Scenario(name: "a manager raises a credit limit (a rule reading the session)",
                     edits: [M.update("Clients", 5, ["CreditLimit": M.number(9000)])]),
            Scenario(name: "ship addresses in the warehouse's format (a server-only script)",
                     edits: [M.insert("Orders", ["ClientId": M.int(9), "OrderDate": M.text("2026-11-20T10:00:00Z"),
                                                 "ShipAddress": M.text("  12   Dock\tSt ")], as: "order"), M.line(2),
                             M.update("Orders", 145, ["ShipAddress": M.text("5  Quay Road  ")])]),
        ]
    }()

    static let generated: [Scenario] = {
        typealias M = Make
        var scenarios: [Scenario] = []
        for product: Int64 in [1, 4, 17, 20, 34, 45, 51, 60, 68, 70] {
            scenarios.append(Scenario(name: "a line for product \(product) on open order 145", edits: [M.line(product, order: M.int(145))]))
        }
        for client: Int64 in 1...8 {
            let discount = Double(client) * 0.05
            scenarios.append(Scenario(name: "client \(client) gets a discount of \(Int(discount * 100))%",
                                      edits: [M.update("Clients", client, ["ClientDiscount": M.number(discount)])]))
        }
        for quantity: Int64 in [-1, 1, 5, 40] {
            scenarios.append(Scenario(name: "line 417 with quantity \(quantity)", edits: [M.update("OrderDetails", 417, ["Quantity": M.int(quantity)])]))
        }
        return scenarios
    }()
}

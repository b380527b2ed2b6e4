import Foundation
import Relata
import RelataRemote
import RelataScript
import RelataServer
import RelataServerTestSupport
import Testing

/// Applying changes to a live server: local validation with the server's rules, merging the
/// processed deltas back, failures that keep what the user typed.
@Suite(.timeLimit(.minutes(10))) struct ApplyTests {
    /// Every PCTrade table, fetched (the rules read across tables).
    static func fetchAll(_ adapter: RemoteDataAdapter) async throws {
        _ = try await adapter.getDataTables(["Clients", "Providers", "Products", "Orders", "OrderDetails"].map { DataRequest(table: $0) })
    }

    @Test func anEditTheServerWouldRefuseFailsHereWithTheServersMessageAndLocation() async throws {
        let server = try PCTradeServer()
        try await server.serve { url in
            let adapter = demoAdapter(url)
            let clients = try await adapter.getDataTable("Clients")
            let row = clients.rows[0]
            var local: ScriptError?
            do { try row.setValue(0.5, forKey: "ClientDiscount") } catch let error as ScriptError { local = error }
            let refusal = try #require(local, "the server's beforePost ran here")
            #expect(row.rowState == .unchanged, "the row stays as it was")

            // The same change, sent by hand past the client's rules, is refused by the server in the same words.
            var delta = try clients.makeDelta()
            var change = DeltaChange(changeId: 1, type: .update)
            for field in clients.fields {
                change.oldValues[field.name] = row[field.name]
                change.newValues[field.name] = field.name == "ClientDiscount" ? .double(0.5) : row[field.name]
            }
            delta.changes = [change]
            let processed = try await server.service.updateData([delta], session: Session(roles: ["Sales"]))
            let failure = try #require(processed[0].changes[0].failure)
            #expect(failure.message == refusal.message)
            #expect(failure.location == refusal.location)
            #expect(refusal.location?.hasPrefix("rules/Clients.js:") == true)
        }
    }

    /// The first client, fetched and renamed "Renamed Ltd" (not applied yet): its table, row and key.
    static func renamingTheFirstClient(of adapter: RemoteDataAdapter) async throws -> (DataTable, DataTableRow, Int64) {
        let clients = try await adapter.getDataTable("Clients")
        let row = clients.rows[0]
        let id = try #require(row["ClientId"].integerValue)
        try row.setValue("Renamed Ltd", forKey: "ClientName")
        return (clients, row, id)
    }

    @Test func aChangeAppliesAndBecomesTheRowsOriginal() async throws {
        let server = try PCTradeServer()
        try await server.serve { url in
            let adapter = demoAdapter(url)
            let (clients, row, id) = try await Self.renamingTheFirstClient(of: adapter)
            let delta = try await adapter.applyChanges(for: clients)
            #expect(delta.changes.map(\.status) == [.resolved])
            // The server answered without the values sent (Prefer: return=minimal): the change returned has them back.
            #expect(delta.changes[0].newValues["ClientName"] == "Renamed Ltd")
            #expect(delta.changes[0].oldValues["ClientId"] == .integer(id))
            #expect(row.rowState == .unchanged && !row.isLocked)
            #expect(row.originalValue(forKey: "ClientName") == "Renamed Ltd")
            #expect(try server.storedRows("Clients", key: "ClientId")[id]?["ClientName"] == "Renamed Ltd")
        }
    }

    /// The client ends with what the server stored: a value a server-only rule set comes back in
    /// the answer and becomes the row's value and original, so the next edit of the row applies.
    @Test(arguments: StorageBackend.allCases)
    func valuesTheServerSetReachTheClient(backend: StorageBackend) async throws {
        let server = try PCTradeServer(backend: backend) { schema in
            let script = schema.script?.source ?? ""
            schema.script = RuleScript(script + """

                function beforePost(row) {
                    if (isServer && 'ContactAddress' in row) row.ContactAddress = 'stamped by the server for ' + row.ClientName;
                }
                """, fileName: "schema.js")
        }
        try await server.serve { url in
            let adapter = demoAdapter(url)
            let (clients, row, id) = try await Self.renamingTheFirstClient(of: adapter)
            #expect(row["ContactAddress"] != "stamped by the server for Renamed Ltd", "the client's own run of the rules does not stamp")
            let fresh = try clients.addNewRow(values: ["ClientName": "Newcomer"])
            let delta = try await adapter.applyChanges(for: clients)
            #expect(delta.changes.map(\.status) == [.resolved, .resolved], "\(delta.errorMessages)")
            let stored = try server.storedRows("Clients", key: "ClientId")
            for (made, key) in [(row, id), (fresh, try #require(fresh["ClientId"].integerValue))] {
                let values = try #require(stored[key])
                #expect(made["ContactAddress"] == values["ContactAddress"], "the client has what the server stored")
                #expect(made.originalValue(forKey: "ContactAddress") == values["ContactAddress"])
                #expect(made.rowState == .unchanged)
            }
            #expect(row["ContactAddress"] == "stamped by the server for Renamed Ltd")

            // The next edit of the row is no conflict.
            try row.setValue("Renamed Again", forKey: "ClientName")
            let again = try await adapter.applyChanges(for: clients)
            #expect(again.changes.map(\.status) == [.resolved], "\(again.errorMessages)")
            #expect(try server.storedRows("Clients", key: "ClientId")[id]?["ContactAddress"] == "stamped by the server for Renamed Again")
        }
    }

    @Test func newRowsGetTheServersKeysInReferencingRowsToo() async throws {
        let server = try PCTradeServer()
        try await server.serve { url in
            let adapter = demoAdapter(url)
            try await Self.fetchAll(adapter)
            let orders = try #require(adapter.table(named: "Orders")), details = try #require(adapter.table(named: "OrderDetails"))
            let order = try orders.addNewRow(values: ["ClientId": 9])
            let temporary = order["OrderId"]
            #expect((temporary.integerValue ?? 0) < 0)
            let line = try details.addNewRow(values: ["OrderId": temporary, "ProductId": 2, "Quantity": 1])
            let deltas = try await adapter.applyChanges(for: [orders, details])
            #expect(deltas.flatMap(\.changes).allSatisfy { $0.status == .resolved }, "\(deltas.flatMap(\.errorMessages))")
            let key = try #require(order["OrderId"].integerValue)
            #expect(key > 0)
            #expect(line["OrderId"] == .integer(key), "the detail row refers to the order's real key")
            #expect((line["DetailId"].integerValue ?? 0) > 0)
            #expect(order.rowState == .unchanged && line.rowState == .unchanged)
            let stored = try server.storedRows("OrderDetails", key: "DetailId")
            #expect(stored[line["DetailId"].integerValue ?? 0]?["OrderId"] == .integer(key))
        }
    }

    @Test func aDeltaRuleRefusesBeforeAnyNetworkCall() async throws {
        let server = try PCTradeServer()
        let adapter = try await server.serveAndReturn { url in
            let adapter = demoAdapter(url)
            try await Self.fetchAll(adapter)
            return adapter
        }
        // The server is gone now: a change the rules refuse never needs it.
        let products = try #require(adapter.table(named: "Products"))
        let row = products.rows[0]
        try products.removeRow(row)
        let delta = try await adapter.applyChanges(for: products)
        #expect(delta.changes.map(\.status) == [.failed])
        #expect(delta.changes[0].message == "products are never deleted; set Discontinued instead")
        #expect(delta.changes[0].failure?.location?.hasPrefix("rules/Products.js:") == true)
        #expect(row.rowState == .deleted && !row.isLocked)
        #expect(row.failureMessage == "products are never deleted; set Discontinued instead")
    }

    @Test func aServerGoneMidwayLeavesTheBatchUnansweredItsRowsLockedAndNothingLost() async throws {
        let server = try PCTradeServer()
        let adapter = try await server.serveAndReturn { url in
            let adapter = demoAdapter(url)
            _ = try await adapter.getDataTable("Clients")
            return adapter
        }
        let clients = try #require(adapter.table(named: "Clients"))
        try clients.rows[0].setValue("Typed by the user", forKey: "ClientName")
        adapter.applyRetries = ApplyRetryPolicy(attempts: 3, firstDelay: .milliseconds(20))
        do {
            try await adapter.applyChanges(for: clients)
            Issue.record("applied to a server that is gone")
        } catch let error as RemoteError {
            #expect(error.kind == .transient)
        }
        // Its fate is unknown: the batch waits, with its id, and its row is locked until the answer comes.
        let waiting = try #require(adapter.unansweredApply)
        #expect(waiting.deltas.flatMap(\.changes).map(\.changeId) == [clients.rows[0].changeId])
        #expect(clients.rows[0].rowState == .modified && clients.rows[0].isLocked)
        #expect(clients.rows[0]["ClientName"] == "Typed by the user")
        #expect(clients.rows[0].failureMessage == nil)
        #expect(throws: RelataError.self) { try clients.rows[0].setValue("Changed meanwhile", forKey: "ClientName") }
        #expect(clients.rows[0]["ClientName"] == "Typed by the user")
    }

    @Test func aConflictFailsJustThatChangeAndKeepsTheUsersValues() async throws {
        let server = try PCTradeServer()
        try await server.serve { url in
            let mine = demoAdapter(url), theirs = demoAdapter(url)
            let clients = try await mine.getDataTable("Clients"), other = try await theirs.getDataTable("Clients")
            try other.rows[0].setValue("Changed by someone else", forKey: "ClientName")
            try await theirs.applyChanges(for: other)

            try clients.rows[0].setValue("Mine", forKey: "ClientName")
            try clients.rows[1].setValue("Also mine", forKey: "ClientName")
            let delta = try await mine.applyChanges(for: clients)
            #expect(delta.changes.map(\.status) == [.failed, .resolved])
            #expect(delta.changes[0].failure?.kind == .conflict)
            #expect(clients.rows[0].rowState == .modified && !clients.rows[0].isLocked)
            #expect(clients.rows[0]["ClientName"] == "Mine")
            #expect(clients.rows[0].failureMessage == delta.changes[0].message)
            #expect(clients.rows[1].rowState == .unchanged)
        }
    }

    @Test func anEditThePermissionsForbidFailsHereWithTheServersWordsOrIsRefusedWhole() async throws {
        let server = try PCTradeServer(permissions: try TablePermissions(["Clients": ["read": ["Clerk", "Sales"], "update": ["Manager"]], "*": ["read": ["Clerk", "Sales"]]]))
        try await server.serve { url in
            let adapter = RemoteDataAdapter(targetURL: url)
            adapter.credentials = RemoteCredentials(user: "clerk", password: "clerk")
            let clients = try await adapter.getDataTable("Clients")
            try clients.rows[0].setValue("Not allowed", forKey: "ClientName")
            let words = "update on Clients is not allowed for roles [Clerk]; roles that may: [Manager]"

            // GetSchema said what the clerk may do: the edit fails here, with the server's words, unsent.
            let verdicts = try await adapter.validateChanges(for: [clients])
            #expect(verdicts.flatMap(\.changes).map(\.message) == [words])
            let local = try await adapter.applyChanges(for: clients)
            #expect(local.changes.map(\.status) == [.failed])
            #expect(local.changes.first?.message == words)
            #expect(adapter.unansweredApply == nil)

            // Sent anyway (no local validation), the server refuses the request whole, with the same words.
            adapter.validatesChangesLocally = false
            do {
                try await adapter.applyChanges(for: clients)
                Issue.record("a clerk updated a client")
            } catch let error as RemoteError {
                #expect(error.code == "permissionDenied")
                #expect(error.kind == .permanent)
                #expect(error.message == words)
            }
            #expect(clients.rows[0].rowState == .modified && !clients.rows[0].isLocked)
            #expect(clients.rows[0]["ClientName"] == "Not allowed")
            #expect(clients.rows[0].failureMessage == words)
            #expect(try server.service.storedRows(of: "Clients").first?["ClientName"] != "Not allowed")
        }
    }
}

extension PCTradeServer {
    /// Serves while `body` runs and returns what it made, after the server stopped.
    nonisolated(nonsending) func serveAndReturn<Made>(_ body: nonisolated(nonsending) (URL) async throws -> Made) async throws -> Made {
        var made: Made?
        try await serve { made = try await body($0) }
        return made!
    }
}

/// `lda` on the client: the adapter's tables, and the server's for a table not loaded yet.
@Suite(.timeLimit(.minutes(10))) struct ClientDataAccessTests {
    @Test func aRuleReadingATableNotLoadedYetGetsTheServersRows() async throws {
        let server = try PCTradeServer()
        try await server.serve { url in
            let adapter = demoAdapter(url)
            let details = try await adapter.getDataTable("OrderDetails")
            let products = try #require(adapter.table(named: "Products"))   // came along for the ProductName lookup
            let orders = try #require(adapter.table(named: "Orders"))
            #expect(orders.rowCount == 0, "not fetched: no lookup of OrderDetails reads it")
            // beforePost reads the product, the order and the client through lda.
            // Order 145 is open, for Tyrell GmbH, with credit to spare.
            let added = try details.addNewRow(values: ["OrderId": 145, "ProductId": 2, "Quantity": 1])
            #expect(orders.rowCount > 0, "fetched when the rule read it")
            #expect(adapter.table(named: "Clients")?.rowCount ?? 0 > 0)
            let product = try products.row(forPrimaryKey: 2)
            #expect(added["UnitPrice"] == product?["UnitPrice"], "the rule set the catalogue price it read")

            // A product the server does not have is refused here exactly as the server refuses it.
            do {
                _ = try details.addNewRow(values: ["OrderId": 145, "ProductId": 9999, "Quantity": 1])
                Issue.record("a line for a missing product was added")
            } catch let error as ScriptError {
                #expect(error.message == "product 9999 does not exist")
            }
        }
    }
}

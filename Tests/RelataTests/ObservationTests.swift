import Foundation
import Testing
@testable import Relata

@Suite(.timeLimit(.minutes(1))) struct ObservationTests {
    /// Used from one test at a time; the notification block runs synchronously on the posting thread.
    final class Recorder: @unchecked Sendable { var events: [DataTableEvent] = [] }

    @Test func operationsFireTableChangedThenIndexMustUpdate() throws {
        let clients = try makeClients()
        let recorder = Recorder()
        let observation = clients.observe { recorder.events.append($0) }
        let row = clients.rows[0]

        try row.setValue("X", forKey: "ClientName")
        #expect(recorder.events == [.tableChanged, .indexMustUpdate])

        recorder.events = []
        try row.cancelChange(forKey: "ClientName")
        #expect(recorder.events == [.tableChanged, .indexMustUpdate], "seed 003: cancelChangeForKey fires both")

        recorder.events = []
        try row.setValue("Y", forKey: "ClientName")
        try row.cancel()
        #expect(recorder.events.count == 4, "seed 003: cancel fires both")

        recorder.events = []
        try row.edit()
        try row.setValue("Z", forKey: "ClientName")
        row.lock()
        row.unlock()
        _ = try clients.makeDelta()
        #expect(recorder.events.isEmpty, "edit-mode writes, locks and delta builds are silent")
        try row.post()
        #expect(recorder.events == [.tableChanged, .indexMustUpdate])

        recorder.events = []
        try clients.addNewRow(values: ["ClientName": "N"])
        try clients.removeRow(clients.rows[1])
        #expect(recorder.events.count == 4)

        observation.cancel()
        recorder.events = []
        try row.setValue("W", forKey: "ClientName")
        #expect(recorder.events.isEmpty)
    }

    @Test func batchUpdatesNotifyOnce() throws {
        let clients = try makeClients()
        let recorder = Recorder()
        let observation = clients.observe { recorder.events.append($0) }
        try clients.performBatchUpdates {
            for row in clients.rows { try row.setValue(0.5, forKey: "ClientDiscount") }
        }
        #expect(recorder.events == [.tableChanged, .indexMustUpdate])
        _ = observation
    }

    /// Swift rules that count the batches they are given and the posts they see.
    final class BatchCountingRules: DataTableRules {
        var batches = 0, posts = 0, postsInBatch: [Int] = []
        private var inBatch = false
        func runBatch<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
            batches += 1
            inBatch = true
            defer { inBatch = false }
            return try body()
        }
        func rowWillPost(_ row: DataTableRow, inserting: Bool) throws {
            posts += 1
            if inBatch { postsInBatch.append(posts) }
        }
        func rowDidAdd(_ row: DataTableRow) throws {}
        func rowWillRemove(_ row: DataTableRow) throws {}
    }

    @Test func aBatchIsHandedToTheRulesOnceWithItsEditsInside() throws {
        let clients = try makeClients()
        let rules = BatchCountingRules()
        clients.rules = rules
        try clients.rows[0].setValue(0.1, forKey: "ClientDiscount")       // outside a batch
        try clients.performBatchUpdates {
            try clients.performBatchUpdates {                              // nested: the same batch
                for row in clients.rows { try row.setValue(0.5, forKey: "ClientDiscount") }
            }
        }
        try clients.cancelAllChanges()                                     // the table's own batch: not the rules'
        #expect(rules.batches == 1)
        #expect(rules.posts == 1 + clients.rows.count)
        #expect(rules.postsInBatch == Array(2...(1 + clients.rows.count)))
    }

    @Test func aBatchOfSeveralTablesIsOneBatchOfEach() throws {
        let clients = try makeClients(), others = try makeClients()
        let clientRules = BatchCountingRules(), otherRules = BatchCountingRules()
        clients.rules = clientRules
        others.rules = otherRules
        let recorder = Recorder()
        let observations = [clients.observe { recorder.events.append($0) }, others.observe { recorder.events.append($0) }]
        let edited = try DataTable.performBatchUpdates(on: [clients, others, clients]) {
            for table in [clients, others] {
                for row in table.rows { try row.setValue(0.5, forKey: "ClientDiscount") }
            }
            #expect(recorder.events.isEmpty, "observers were told before the batch ended")
            return clients.rows.count + others.rows.count
        }
        #expect(edited == 6)
        #expect(clientRules.batches == 1 && otherRules.batches == 1)
        #expect(clientRules.postsInBatch == [1, 2, 3] && otherRules.postsInBatch == [1, 2, 3])
        #expect(recorder.events == [.tableChanged, .indexMustUpdate, .tableChanged, .indexMustUpdate])
        // No tables: the body just runs.
        #expect(DataTable.performBatchUpdates(on: []) { 7 } == 7)
        _ = observations
    }

    @Test func notificationsArePosted() throws {
        let clients = try makeClients()
        let recorder = Recorder()
        let token = NotificationCenter.default.addObserver(forName: DataTable.tableChangedNotification, object: clients,
                                                           queue: nil) { _ in recorder.events.append(.tableChanged) }
        defer { NotificationCenter.default.removeObserver(token) }
        try clients.rows[0].setValue("X", forKey: "ClientName")
        #expect(recorder.events == [.tableChanged])
    }

    @Test func releasingTheObservationEndsIt() throws {
        let clients = try makeClients()
        let recorder = Recorder()
        var observation: DataTableObservation? = clients.observe { recorder.events.append($0) }
        _ = observation
        observation = nil
        try clients.rows[0].setValue("X", forKey: "ClientName")
        #expect(recorder.events.isEmpty)
    }

    /// Observations and lookups point back to their tables without keeping them alive (and
    /// without weak references): each side may go first.
    @Test func anObservationOrALookupOutlivingItsTableIsHarmless() throws {
        var clients: DataTable? = try makeClients()
        let recorder = Recorder()
        let observation = try #require(clients).observe { recorder.events.append($0) }
        weak let gone = clients
        clients = nil
        #expect(gone == nil, "the observation does not keep the table alive")
        observation.cancel()   // its table has gone: nothing to do

        var (orders, details): (DataTable, DataTable?) = try makeOrders()
        weak let goneDetails = details
        details = nil
        #expect(goneDetails == nil, "the lookup table does not keep the table that looks up in it alive")
        try orders.rows[0].setValue("Globex", forKey: "Customer")   // tells the gone table's lookup nothing, and does not crash
        try orders.addNewRow(values: ["Customer": "Initech"])
        _ = try orders.makeDelta()
        #expect(orders.rowCount == 2)
    }
}

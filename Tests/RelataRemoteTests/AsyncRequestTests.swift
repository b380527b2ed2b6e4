import Foundation
import Relata
import RelataRemote
import Testing

/// The original's way: `begin…` requests, configured, started, called back where they started.
@Suite(.timeLimit(.minutes(10))) struct AsyncRequestTests {
    final class Listener: RemoteDataAdapterDelegate {
        var events: [String] = []
        func remoteDataAdapter(_ adapter: RemoteDataAdapter, didReceiveDataSize progress: FetchProgress) {
            MainActor.assertIsolated()
            events.append("progress \(progress.table)")
        }
        func remoteDataAdapter(_ adapter: RemoteDataAdapter, didReceiveTable table: DataTable) { events.append("table \(table.name)") }
        func remoteDataAdapter(_ adapter: RemoteDataAdapter, didReceiveTables tables: [DataTable]) { events.append("tables \(tables.count)") }
        func remoteDataAdapter(_ adapter: RemoteDataAdapter, didApplyChanges deltas: [Delta]) {
            events.append("applied \(deltas.flatMap(\.changes).count)")
        }
        func remoteDataAdapter(_ adapter: RemoteDataAdapter, didFailChange change: DeltaChange, of table: DataTable) {
            events.append("failed \(table.name) \(change.changeId)")
        }
    }

    /// Waits, on the main actor, until the request is done (for at most two minutes).
    @MainActor func finish<Result>(_ request: AsyncRequest<Result>) async {
        let deadline = ContinuousClock.now + .seconds(120)
        while !request.isDone, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
        if !request.isDone { Issue.record("the request did not finish within two minutes") }
    }

    @MainActor @Test func anUnstartedRequestIsConfiguredThenStartedAndCallsBackOnTheMainActor() async throws {
        let server = try PCTradeServer()
        try await server.serve { url in
            let adapter = demoAdapter(url)
            let listener = Listener()
            var progressed = 0, completed: DataTable?, context: String?
            let request = adapter.beginGetDataTable("OrderDetails", start: false)
            #expect(!request.isStarted)
            request.context = "first load"
            request.delegate = listener
            request.progress = { _ in
                MainActor.assertIsolated()
                progressed += 1
            }
            request.completion = { table, request in
                MainActor.assertIsolated()
                completed = table
                context = request.context as? String
            }
            request.failure = { error, _ in Issue.record("failed: \(error)") }
            request.start()
            #expect(request.isStarted)
            await finish(request)
            #expect(completed === adapter.table(named: "OrderDetails"))
            #expect((completed?.rowCount ?? 0) > 0)
            #expect(context == "first load")
            #expect(progressed > 0)
            #expect(listener.events.first == "progress OrderDetails")
            // The tables its lookups read come along, and the delegate hears of each.
            #expect(listener.events.filter { !$0.hasPrefix("progress") } == ["table OrderDetails", "table Products", "table Providers", "tables 1"])
            #expect(request.delegate == nil, "the request lets its delegate go when done")

            // Several tables, then an apply, the same way; started in the background, called back here.
            let both = adapter.beginGetDataTables([DataRequest(table: "Clients"), DataRequest(table: "Providers")])
            await finish(both)
            let clients = try #require(both.result?.first)
            try clients.rows[0].setValue("Acme Renamed", forKey: "ClientName")
            let apply = adapter.beginApplyChanges(for: [clients], start: false)
            let applyListener = Listener()
            apply.delegate = applyListener
            apply.completion = { deltas, _ in
                MainActor.assertIsolated()
                #expect(deltas.first?.changes.map(\.status) == [.resolved])
            }
            apply.startInBackground()
            await finish(apply)
            #expect(apply.error == nil)
            #expect(applyListener.events == ["applied 1"])
            #expect(clients.rows[0].rowState == .unchanged)
        }
    }

    @MainActor @Test func aCancelledRequestFailsWithCancellation() async throws {
        let server = try PCTradeServer()
        try await server.serve { url in
            let adapter = demoAdapter(url)
            var failure: (any Error)?
            let request = adapter.beginGetDataTable("Clients", start: false)
            request.failure = { error, _ in failure = error }
            request.completion = { _, _ in Issue.record("a cancelled request completed") }
            request.start()
            request.cancel()
            await finish(request)
            #expect(request.isCancelled)
            #expect(failure is CancellationError)
            #expect(adapter.table(named: "Clients")?.rowCount ?? 0 == 0)
        }
    }
}

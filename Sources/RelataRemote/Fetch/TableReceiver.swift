import Foundation
import Relata

/// Turns a GetData answer (a row stream) into tables as its bytes arrive.
///
/// A request for all of a table's fields fills the adapter's own table: directly when the
/// table has never held rows (a failure empties it again), else through a staging table
/// that refreshes its rows only once the whole answer arrived (``DataTable/refreshRows(from:)``,
/// pending changes kept) — a failed refresh leaves the rows as they were. A request for some fields gets a table of its own.
struct TableReceiver {
    private let requests: [DataRequest]
    private let rules: LoadedRules
    private var reader = RowStreamReader()
    /// Per table received: what the caller gets, and where its rows are loaded.
    private var received: [(result: DataTable, loading: DataTable)] = []
    private var rowsReceived = 0
    private var expectedRows = 0

    init(requests: [DataRequest], rules: LoadedRules) {
        self.requests = requests
        self.rules = rules
    }

    /// The tables received whole so far.
    var tables: [DataTable] { received.map(\.result) }

    /// Reads the next bytes, reporting the progress they made (once per chunk, and before the
    /// table they complete) and each table they complete.
    mutating func consume(_ bytes: Data, onProgress: (FetchProgress) -> Void, onTable: (DataTable) -> Void) throws {
        var progress: FetchProgress?
        for event in try reader.append(bytes) {
            switch event {
            case .schema: break
            case .table(let name, let fields, let expected):
                guard received.count < requests.count else {
                    throw RemoteError.invalidResponse("GetData", RelataError(.invalidResponse, "it holds more tables than were asked for"))
                }
                received.append(try destination(for: requests[received.count], name: name, fields: fields))
                rowsReceived = 0
                expectedRows = expected
            case .rows(let rows):
                guard let loading = received.last?.loading else { continue }
                try loading.loadRows(rows)
                rowsReceived += rows.count
                progress = FetchProgress(table: loading.name, rowsReceived: rowsReceived, expectedRows: max(expectedRows, rowsReceived),
                                         bytesReceived: reader.bytesRead)
            case .tableEnd:
                if let made = progress { onProgress(made) }
                progress = nil
                if let last = received.last { onTable(last.result) }
            case .end: break
            case .error(let json):
                let answer = try JSONDecoder().decode(ProtocolMessages.ErrorAnswer.self, from: json)
                throw RemoteError(errorAnswer: answer.error, status: nil)
            }
        }
        if let made = progress { onProgress(made) }
    }

    /// Checks the answer is whole and puts staged rows in place, keeping pending changes.
    /// - Returns: the pending changes whose rows changed at the server, by table.
    func finish() throws -> [(table: DataTable, conflicts: [RefreshConflict])] {
        try reader.finish()
        guard received.count == requests.count else {
            throw RemoteError.invalidResponse("GetData", RelataError(.invalidResponse, "it holds \(received.count) of the \(requests.count) tables asked for"))
        }
        var conflicts: [(table: DataTable, conflicts: [RefreshConflict])] = []
        for (result, loading) in received where result !== loading {
            let found = try result.refreshRows(from: loading)
            if !found.isEmpty { conflicts.append((result, found)) }
        }
        for (index, (result, _)) in received.enumerated() where result === rules.adapter.table(named: result.name) {
            rules.fetched.insert(result.name.lowercased())
            rules.lastRequests[result.name.lowercased()] = requests[index]
        }
        return conflicts
    }

    /// After a failure: empties what arrived (``abandon()``) and gives the error to throw — a
    /// damaged or cut-short stream as the client's transient ``RemoteError``.
    func abandoning(after error: any Error) -> any Error {
        abandon()
        if let error = error as? RelataError, error.code == .invalidResponse {
            return RemoteError.invalidResponse("GetData", error)
        }
        return error
    }

    /// After a failure: tables filled directly are emptied again (they were empty before).
    private func abandon() {
        for (result, loading) in received where result === loading && result === rules.adapter.table(named: result.name) {
            result.discardAllRows()
        }
    }

    private func destination(for request: DataRequest, name: String, fields: [FieldDefinition]) throws -> (DataTable, DataTable) {
        guard name.equalsIgnoringCase(request.table) else {
            throw RemoteError.invalidResponse("GetData", RelataError(.invalidResponse, "table \(name) came where \(request.table) was asked for"))
        }
        guard request.isWholeTable, let own = rules.adapter.table(named: name), own.fields == fields else {
            let table = try DataTable(name: name, fields: fields)
            return (table, table)
        }
        if own.rowCount == 0 && !own.hasChanges && !rules.fetched.contains(own.name.lowercased()) { return (own, own) }
        return (own, try DataTable(name: name, fields: fields))
    }
}

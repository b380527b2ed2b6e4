import Foundation
import Relata

/// Fetching tables: GetData, as a row stream read while it arrives.
extension RemoteDataAdapter {
    /// Fetches one table: all its rows, or those a where expression selects.
    ///
    /// ```swift
    /// let orders = try await adapter.getDataTable("Orders", where: "ClientId = :client AND Total > 100",
    ///                                             parameters: ["client": 7], maxRecords: 500)
    /// ```
    /// See ``getDataTables(_:progress:)``.
    nonisolated(nonsending) public func getDataTable(_ name: String, fields: [String]? = nil, where expression: String? = nil,
                                                     parameters: [String: Value] = [:], maxRecords: Int? = nil,
                                                     progress: ((FetchProgress) -> Void)? = nil) async throws -> DataTable {
        try await getDataTables([DataRequest(table: name, fields: fields, where: expression, parameters: parameters,
                                             maxRecords: maxRecords)], progress: progress)[0]
    }

    /// Fetches the rows of a table that a parsed where expression selects — parsed here, so a
    /// syntax error never reaches the server; the server checks the fields it names.
    ///
    /// ```swift
    /// let open = try Relata.Expression("Status = 'open' AND ClientId = :client")
    /// let orders = try await adapter.getDataTable("Orders", where: open, parameters: ["client": 9])
    /// ```
    nonisolated(nonsending) public func getDataTable(_ name: String, fields: [String]? = nil, where expression: Relata.Expression,
                                                     parameters: [String: Value] = [:], maxRecords: Int? = nil,
                                                     progress: ((FetchProgress) -> Void)? = nil) async throws -> DataTable {
        let missing = expression.parameterNames.filter { parameters[$0] == nil }.sorted()
        guard missing.isEmpty else {
            throw RelataError(.invalidArgument, "the where expression uses :\(missing.joined(separator: ", :")), which no parameter gives", table: name)
        }
        return try await getDataTable(name, fields: fields, where: expression.text, parameters: parameters, maxRecords: maxRecords,
                                      progress: progress)
    }

    /// Fetches the answer of a DA SQL query (`Documentation/DASQL.md`) as a table of its own:
    /// its fields are the query's columns (computed ones read-only), and it is not one of the
    /// adapter's tables, so its changes cannot be applied. The query is parsed here, so a syntax
    /// error never reaches the server; the server checks names and the caller's permissions.
    ///
    /// ```swift
    /// let totals = try await adapter.getDataTable(sql: """
    ///     SELECT c.ClientName, SUM(d.Quantity * d.UnitPrice) AS Total
    ///     FROM Clients c JOIN Orders o ON o.ClientId = c.ClientId JOIN OrderDetails d ON d.OrderId = o.OrderId
    ///     WHERE o.OrderDate >= :since GROUP BY c.ClientName ORDER BY Total DESC
    ///     """, parameters: ["since": "2024-01-01"], maxRecords: 10)
    /// ```
    nonisolated(nonsending) public func getDataTable(sql: String, parameters: [String: Value] = [:], name: String = "Query",
                                                     maxRecords: Int? = nil, progress: ((FetchProgress) -> Void)? = nil) async throws -> DataTable {
        let query = try DASQLQuery(sql)
        let missing = query.parameterNames.filter { parameters[$0] == nil }.sorted()
        guard missing.isEmpty else {
            throw RelataError(.invalidArgument, "the query uses :\(missing.joined(separator: ", :")), which no parameter gives", table: name)
        }
        return try await getDataTables([DataRequest(table: name, sql: sql, parameters: parameters, maxRecords: maxRecords)], progress: progress)[0]
    }

    /// Fetches several tables in one request (the original's "cube").
    ///
    /// A request for all of a table's fields fills the adapter's table of that name (see
    /// ``tables``) with the rows it selects, replacing those it held: lookups, calculated
    /// fields and the rules' `lda` then see them. Pending changes survive a refresh
    /// (``DataTable/refreshRows(from:)``): a change whose row changed on the server meanwhile
    /// is a conflict — the row keeps the user's values and says so in its
    /// ``DataTableRow/failureMessage``, and the delegate hears of it. A request naming some
    /// fields gets a table of its own, outside the adapter (its changes cannot be applied).
    /// The tables that lookup fields read from come along, whole, the first time they are
    /// needed (fetching `OrderDetails` brings `Products` for its `ProductName`).
    ///
    /// The answer is read as it arrives; `progress` and the delegate hear how far it came.
    /// A failure part-way leaves every table of the adapter as it was.
    ///
    /// ```swift
    /// let tables = try await adapter.getDataTables([DataRequest(table: "Orders"), DataRequest(table: "OrderDetails")])
    /// let details = tables[1]
    /// ```
    /// - Returns: the tables, in the order asked.
    /// - Throws: ``RemoteError`` (``RemoteError/Kind/transient`` when the network failed or the
    ///   answer was cut short; retrying is safe); `CancellationError` when the task is cancelled.
    nonisolated(nonsending) public func getDataTables(_ requests: [DataRequest],
                                                      progress: ((FetchProgress) -> Void)? = nil) async throws -> [DataTable] {
        try await fetch(requests, progress: progress, listener: nil).tables
    }

    /// Fetches tables; returns them with the refresh conflicts found (the delegate hears of those too).
    nonisolated(nonsending) func fetch(_ requests: [DataRequest], progress: ((FetchProgress) -> Void)?,
                                       listener: (any RemoteDataAdapterDelegate)?) async throws
        -> (tables: [DataTable], conflicts: [(table: DataTable, conflicts: [RefreshConflict])]) {
        guard !requests.isEmpty else { return ([], []) }
        do {
            let rules = try await loadedRules()
            let wholeTables = requests.filter(\.isWholeTable).map { $0.table.lowercased() }
            if let twice = wholeTables.first(where: { name in wholeTables.filter { $0 == name }.count > 1 }) {
                throw RelataError(.invalidArgument, "the table is asked for twice with all its fields; one request fills it", table: twice)
            }
            let sent = requests + lookupSources(of: requests, rules: rules)
            let body = try JSONEncoder().encode(ProtocolMessages.GetDataRequest(requests: sent))
            var received = try await withSession { token in
                try await receive(sent, body: body, token: token, rules: rules, progress: progress, listener: listener)
            }
            received.tables = Array(received.tables.prefix(requests.count))
            for (table, conflicts) in received.conflicts {
                notify(listener) { $0.remoteDataAdapter(self, didFindConflicts: conflicts, in: table) }
            }
            notify(listener) { $0.remoteDataAdapter(self, didReceiveTables: received.tables) }
            return received
        } catch {
            notify(listener) { $0.remoteDataAdapter(self, didFailWithError: error) }
            throw error
        }
    }

    /// The tables the lookup fields of the requested tables read from (and theirs in turn) that
    /// were never fetched: they come in the same request, so a lookup shows the server's value
    /// from the start instead of NULL.
    private func lookupSources(of requests: [DataRequest], rules: LoadedRules) -> [DataRequest] {
        var known = rules.fetched.union(requests.map { $0.table.lowercased() })
        var pending = requests.filter(\.isWholeTable).map(\.table)
        var sources: [DataRequest] = []
        while let name = pending.popLast() {
            for lookup in rules.schema.table(named: name)?.lookupFields ?? [] where known.insert(lookup.lookupTable.lowercased()).inserted {
                sources.append(DataRequest(table: lookup.lookupTable))
                pending.append(lookup.lookupTable)
            }
        }
        return sources
    }

    /// Fetches a table again with the request that last filled it (all its rows if none did),
    /// keeping its pending changes.
    ///
    /// ```swift
    /// for conflict in try await adapter.refresh(orders) { print(conflict.row.label, conflict.message) }
    /// ```
    /// - Returns: the pending changes whose rows changed on the server since they were fetched.
    @discardableResult
    nonisolated(nonsending) public func refresh(_ table: DataTable) async throws -> [RefreshConflict] {
        let rules = try await rules(owning: [table])
        return try await fetch([rules.lastRequests[table.name.lowercased()] ?? DataRequest(table: table.name)], progress: nil, listener: nil)
            .conflicts.flatMap(\.conflicts)
    }

    /// The rules, downloaded on first use.
    nonisolated(nonsending) func loadedRules() async throws -> LoadedRules {
        if let rules { return rules }
        return try await downloadRules()
    }

    nonisolated(nonsending) private func receive(_ requests: [DataRequest], body: Data, token: String, rules: LoadedRules,
                                                  progress: ((FetchProgress) -> Void)?, listener: (any RemoteDataAdapterDelegate)?) async throws
        -> (tables: [DataTable], conflicts: [(table: DataTable, conflicts: [RefreshConflict])]) {
        let call = ProtocolCall(service: dataService, method: "GetData", body: body, token: token, accept: RowStream.contentType)
        var receiver = TableReceiver(requests: requests, rules: rules)
        var refusal: (status: Int, body: Data)?
        do {
            for try await part in transport.stream(call) {
                switch part {
                case .status(let status) where status != 200:
                    refusal = (status, Data())
                case .status:
                    break
                case .bytes(let bytes) where refusal != nil:
                    refusal?.body.append(bytes)
                case .bytes(let bytes):
                    try receiver.consume(bytes, onProgress: { made in
                        progress?(made)
                        notify(listener) { $0.remoteDataAdapter(self, didReceiveDataSize: made) }
                    }, onTable: { table in
                        notify(listener) { $0.remoteDataAdapter(self, didReceiveTable: table) }
                    })
                }
            }
            if let refusal { throw RemoteError(status: refusal.status, body: refusal.body) }
            let conflicts = try receiver.finish()
            return (receiver.tables, conflicts)
        } catch {
            throw receiver.abandoning(after: error)
        }
    }
}


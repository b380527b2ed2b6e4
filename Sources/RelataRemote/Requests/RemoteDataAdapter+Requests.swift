import Relata

/// The original's `begin…` calls: each returns an ``AsyncRequest``, started at once unless
/// `start` is false.
extension RemoteDataAdapter {
    /// Fetches a table as an ``AsyncRequest``; see ``getDataTable(_:fields:where:parameters:maxRecords:progress:)``.
    ///
    /// ```swift
    /// let request = adapter.beginGetDataTable("Orders", where: "Status = 'open'", start: false)
    /// request.completion = { orders, _ in self.orders = orders }
    /// request.start()
    /// ```
    public func beginGetDataTable(_ name: String, fields: [String]? = nil, where expression: String? = nil,
                                  parameters: [String: Value] = [:], maxRecords: Int? = nil, start: Bool = true,
                                  isolation: isolated (any Actor) = #isolation) -> AsyncRequest<DataTable> {
        let request = DataRequest(table: name, fields: fields, where: expression, parameters: parameters, maxRecords: maxRecords)
        return begin(start: start) { asyncRequest, adapter, _ in
            try await adapter.fetch([request], progress: asyncRequest.progress, listener: asyncRequest.delegate).tables[0]
        }
    }

    /// Fetches several tables in one request as an ``AsyncRequest``; see ``getDataTables(_:progress:)``.
    public func beginGetDataTables(_ requests: [DataRequest], start: Bool = true,
                                   isolation: isolated (any Actor) = #isolation) -> AsyncRequest<[DataTable]> {
        begin(start: start) { asyncRequest, adapter, _ in
            try await adapter.fetch(requests, progress: asyncRequest.progress, listener: asyncRequest.delegate).tables
        }
    }

    /// Applies changes as an ``AsyncRequest``; see ``applyChanges(for:)-([DataTable])``.
    ///
    /// ```swift
    /// let request = adapter.beginApplyChanges(for: [orders, details])
    /// request.failure = { error, _ in showRetry(error) }
    /// ```
    public func beginApplyChanges(for tables: [DataTable], start: Bool = true,
                                  isolation: isolated (any Actor) = #isolation) -> AsyncRequest<[Delta]> {
        // The tables stay with the adapter; the request finds them again by name when it runs.
        let names = tables.map(\.name)
        return begin(start: start) { asyncRequest, adapter, _ in
            let tables = try names.map(adapter.ownTable(named:))
            return try await adapter.applyChanges(for: tables, listener: asyncRequest.delegate)
        }
    }

    private func begin<Result>(start: Bool, isolation: isolated (any Actor) = #isolation,
                               _ work: @escaping @Sendable (AsyncRequest<Result>, RemoteDataAdapter, isolated any Actor) async throws -> Result)
        -> AsyncRequest<Result> {
        let request = AsyncRequest(adapter: self, work)
        if start { request.start() }
        return request
    }
}

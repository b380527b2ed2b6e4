import Relata

/// Reading data through the adapter, with the data events.
extension LocalDataAdapter {
    /// Returns a table, running `beforeGetData(names, requests)` first and
    /// `afterGetData(names, requests)` after; a `fail()` in `beforeGetData`
    /// refuses the read (the error is thrown).
    ///
    /// Each request is `{ tableName, where, parameters }` in the scripts.
    ///
    /// ```swift
    /// let clients = try adapter.fetchTable("Clients")
    /// ```
    public func fetchTable(_ name: String) throws -> DataTable {
        guard let table = try fetchTables([name]).first else { throw unknownTable(name) }
        return table
    }

    /// The original's name for ``fetchTable(_:)``, kept for code ported from Data Abstract.
    @available(*, deprecated, renamed: "fetchTable(_:)")
    public func getDataTable(_ name: String) throws -> DataTable { try fetchTable(name) }

    /// The rows of a table for which an expression is true, with the data events.
    ///
    /// ```swift
    /// let big = try adapter.fetchRows(from: "Orders", where: "Total > :min", parameters: ["min": 1000])
    /// ```
    public func fetchRows(from name: String, where expression: String, parameters: [String: Value] = [:]) throws -> [DataTableRow] {
        guard let table = table(named: name) else { throw unknownTable(name) }
        try runtime.fireDataEvent(.beforeGetData, requests: [DataRequest(table: table.name, where: expression, parameters: parameters)])
        let rows = try table.rows(where: expression, parameters: parameters)
        try runtime.fireDataEvent(.afterGetData, requests: [DataRequest(table: table.name, where: expression, parameters: parameters)])
        return rows
    }

    /// Several tables at once, with one pair of data events.
    ///
    /// ```swift
    /// let tables = try adapter.fetchTables(["Clients", "Orders"])
    /// ```
    public func fetchTables(_ names: [String]) throws -> [DataTable] {
        let tables = try names.map { name in
            guard let table = table(named: name) else { throw unknownTable(name) }
            return table
        }
        try runtime.fireDataEvent(.beforeGetData, requests: tables.map { DataRequest(table: $0.name) })
        try runtime.fireDataEvent(.afterGetData, requests: tables.map { DataRequest(table: $0.name) })
        return tables
    }
}

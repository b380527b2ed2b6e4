internal import CJavaScriptCore
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
        try fireDataEvent(.beforeGetData, names: [table.name], expression: expression, parameters: parameters)
        let rows = try table.rows(where: expression, parameters: parameters)
        try fireDataEvent(.afterGetData, names: [table.name], expression: expression, parameters: parameters)
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
        try fireDataEvent(.beforeGetData, names: tables.map(\.name), expression: nil, parameters: [:])
        try fireDataEvent(.afterGetData, names: tables.map(\.name), expression: nil, parameters: [:])
        return tables
    }

    private func fireDataEvent(_ event: RuleEvent, names: [String], expression: String?, parameters: [String: Value]) throws {
        for script in host.allScripts where script.handler(event.handlerName) != nil {
            try host.fire(event, in: script, table: script.table) { context in
                let requests = try names.map { name -> JSValueRef in
                    let request = context.makeObject()
                    context.setProperty("tableName", of: request, to: context.string(name))
                    context.setProperty("where", of: request, to: expression.map { context.string($0) } ?? JSValueMakeNull(context.ref))
                    context.setProperty("parameters", of: request, to: try context.object(from: parameters))
                    return request
                }
                return [context.makeArray(names.map { context.string($0) }), context.makeArray(requests)]
            }
        }
    }
}

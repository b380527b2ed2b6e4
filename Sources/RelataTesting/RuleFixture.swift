import Foundation
import Relata
import RelataScript
import RelataTools

/// A schema's tables loaded fresh for one test, with its rules, and edits made
/// through those rules as a user would make them.
///
/// ```swift
/// @Test func shippedOrdersStayShipped() throws {
///     let pcTrade = try RuleFixture(schema: schemaURL)
///     expectRuleFailure(matching: "cannot become open") {
///         try pcTrade.update("Orders", key: 1, ["Status": "open"])
///     }
/// }
/// ```
public final class RuleFixture {
    /// The adapter holding the tables and running the rules.
    public let adapter: LocalDataAdapter

    /// Loads a schema file with its data and scripts.
    /// - Parameters:
    ///   - fixtures: rows added as original data, by table name, after the schema's data.
    ///   - session: the session the rules see (``session``); the schema file's `session` when nil.
    public init(schema url: URL, fixtures: [String: [[String: Value]]] = [:], session: Session? = nil) throws {
        adapter = try Schema(contentsOf: url).makeAdapter()
        if let session { adapter.session = session }
        for (name, rows) in fixtures.sorted(by: { $0.key < $1.key }) {
            let table = try self.table(name)
            try table.loadRows(named: rows)
        }
    }

    /// The session the rules see, as a data server's login would give it: set it to test a rule
    /// that reads `session`.
    ///
    /// ```swift
    /// pcTrade.session = Session(values: ["User": "ann"], roles: ["Clerk"])
    /// ```
    public var session: Session {
        get { adapter.session }
        set { adapter.session = newValue }
    }

    /// A table by name, or an error listing the tables.
    public func table(_ name: String) throws -> DataTable {
        guard let table = adapter.table(named: name) else {
            throw RelataError(.unknownTable, "the schema has no such table (tables: \(adapter.tables.map(\.name).joined(separator: ", ")))", table: name)
        }
        return table
    }

    /// The row with a primary key, or an error.
    public func row(_ table: String, key: Value...) throws -> DataTableRow {
        let table = try self.table(table)
        guard let row = try table.row(forPrimaryKey: key) else {
            throw RelataError(.rowNotFound, "no row has the key \(key.map(\.description).joined(separator: ", "))", table: table.name)
        }
        return row
    }

    /// Adds a row through the rules (`onNewRow`, the values, then `beforePost`/`beforeInsert`).
    @discardableResult
    public func insert(_ table: String, _ values: [String: Value]) throws -> DataTableRow {
        try self.table(table).addNewRow(values: values)
    }

    /// Changes a row's values as one edit, through the rules (`beforePost`/`beforeUpdate`).
    @discardableResult
    public func update(_ table: String, key: Value..., values: [String: Value]) throws -> DataTableRow {
        let row = try self.table(table).row(forPrimaryKey: key)
        guard let row else {
            throw RelataError(.rowNotFound, "no row has the key \(key.map(\.description).joined(separator: ", "))", table: table)
        }
        try row.setValues(values)
        return row
    }

    /// Removes a row through the rules (`beforeDelete`).
    public func delete(_ table: String, key: Value...) throws {
        let found = try self.table(table)
        guard let row = try found.row(forPrimaryKey: key) else {
            throw RelataError(.rowNotFound, "no row has the key \(key.map(\.description).joined(separator: ", "))", table: table)
        }
        try found.removeRow(row)
    }

    /// Applies every pending change (delta and transaction rules run).
    /// - Throws: the rule error of the first change that failed, with its script location.
    @discardableResult
    public func apply() throws -> [Delta] {
        let deltas = try adapter.applyChanges(for: adapter.tables)
        if let failure = ScriptError(firstFailureIn: deltas) { throw failure }
        return deltas
    }
}

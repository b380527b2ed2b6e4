import Relata

/// What `lda` in a rule script reads and writes: the data of the site the rules run on.
///
/// The rule runtime turns each `lda` call into one of these requirements, so the
/// same scripts work over any data: a ``LocalDataAdapter``'s tables
/// (``TableDataAccess``), a data server's database, a client's loaded tables
/// backed by its server. Rows are ``DataTableRow``s, so a rule sees the same row
/// object whatever holds the data; writes go through the target table's rules.
///
/// ```swift
/// final class Catalogue: RuleDataAccess {
///     let products: DataTable
///     var tableNames: [String] { [products.name] }
///     func fields(ofTable name: String) -> [FieldDefinition]? { name == products.name ? products.fields : nil }
///     func row(in table: String, key: [Value]) throws -> DataTableRow? { try products.row(forPrimaryKey: key) }
///     // … rows(in:where:parameters:), insert, update and remove
/// }
/// ```
public protocol RuleDataAccess: AnyObject {
    /// The tables rules can reach, for `schema.tables` and for error messages.
    var tableNames: [String] { get }
    /// The fields of a table (case-insensitive name), or nil when there is no such table.
    func fields(ofTable name: String) -> [FieldDefinition]?
    /// `lda.select(table, key…)`: the row with a primary key, or nil.
    func row(in table: String, key: [Value]) throws -> DataTableRow?
    /// `lda.selectWhere(table, where, parameters)`: the rows an expression selects.
    func rows(in table: String, where expression: String, parameters: [String: Value]) throws -> [DataTableRow]
    /// `lda.insert(table, values)`: adds a row (its table's rules run).
    func insert(into table: String, values: [String: Value]) throws -> DataTableRow
    /// `lda.update(table, row, values)`: changes a row (its table's rules run).
    func update(_ row: DataTableRow, values: [String: Value]) throws
    /// `lda.remove(table, row)`: removes a row (its table's rules run).
    func remove(_ row: DataTableRow) throws
    /// `lda.sql(query, parameters)`: the answer of a DA SQL query over the tables rules see
    /// (`Documentation/DASQL.md`), pending changes included — the same answer on every site.
    func answer(sql: String, parameters: [String: Value]) throws -> DataTable
}

extension RuleDataAccess {
    /// Data access that cannot answer DA SQL says so.
    public func answer(sql: String, parameters: [String: Value]) throws -> DataTable {
        throw ScriptError(.runtime, "lda.sql: DA SQL is not available over this data")
    }
}

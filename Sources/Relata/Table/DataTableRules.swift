/// Row-level business rules that a table consults before it changes.
///
/// RelataScript's rule sets implement this to run JavaScript handlers
/// (`onNewRow`, `beforePost`, `beforeInsert`, `beforeUpdate`, `beforeDelete`);
/// you can implement it in Swift too:
///
/// ```swift
/// final class PositiveQuantity: DataTableRules {
///     func rowDidAdd(_ row: DataTableRow) throws {}
///     func rowWillPost(_ row: DataTableRow, inserting: Bool) throws {
///         if (try row.value(forKey: "Quantity").integerValue ?? 0) <= 0 {
///             throw RelataError(.requiredValueMissing, "Quantity must be positive")
///         }
///     }
///     func rowWillRemove(_ row: DataTableRow) throws {}
/// }
/// orderDetails.rules = PositiveQuantity()
/// ```
///
/// A rule engine that runs rules over many rows at once applies the values the
/// rules set inside ``DataTable/withoutRules(_:)``, so they are not checked twice.
///
/// When a table has rules, every direct change (a `setValue` outside edit
/// mode) is posted on its own: the rules see the row with the new value, and
/// if they throw, the change is undone and the error rethrown.
public protocol DataTableRules: AnyObject {
    /// A row was just added; the rules may set its values. Throwing cancels the addition.
    func rowDidAdd(_ row: DataTableRow) throws
    /// A row's changes are about to become pending. The row shows the new values
    /// (and is in edit mode, so values the rules set are part of the same post);
    /// `inserting` is true for a new row. Throwing leaves the row as it was.
    func rowWillPost(_ row: DataTableRow, inserting: Bool) throws
    /// A row is about to be removed. Throwing keeps it.
    func rowWillRemove(_ row: DataTableRow) throws
    /// Runs `body`, a batch of changes (``DataTable/performBatchUpdates(_:)``), however suits
    /// rules that are about to be consulted many times in a row. The default runs it as it is;
    /// RelataScript's rule sets run it inside one entry into JavaScript, so each rule call of
    /// the batch is nested in it instead of entering JavaScript afresh.
    ///
    /// ```swift
    /// final class KnownProducts: DataTableRules {
    ///     private var names: Set<String>?
    ///     func runBatch<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
    ///         names = loadProductNames()   // once for the whole batch
    ///         defer { names = nil }
    ///         return try body()
    ///     }
    ///     func rowWillPost(_ row: DataTableRow, inserting: Bool) throws {
    ///         let name = row["Product"].stringValue ?? ""
    ///         guard (names ?? loadProductNames()).contains(name) else {
    ///             throw RelataError(.constraintViolation, "unknown product \(name)")
    ///         }
    ///     }
    ///     func rowDidAdd(_ row: DataTableRow) throws {}
    ///     func rowWillRemove(_ row: DataTableRow) throws {}
    /// }
    /// ```
    func runBatch<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T
}

extension DataTableRules {
    public func runBatch<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        try body()
    }
}

extension DataTable {
    /// Runs `body` with the table's rules switched off: for rule engines that
    /// apply what rules computed, and for loading data that was checked elsewhere.
    ///
    /// ```swift
    /// try table.withoutRules { try row.setValue(normalized, forKey: "Code") }
    /// ```
    ///
    /// What `body` writes is the work of rules (``RuleScope``), not the user's edits.
    public func withoutRules<T>(_ body: () throws -> T) rethrows -> T {
        let saved = rules
        rules = nil
        defer { rules = saved }
        return try RuleScope.run(body)
    }
}

import Foundation

/// What a table tells its observers, after the original system's
/// `DA_NOTIFICATION_TABLE_CHANGED` and `DA_NOTIFICATION_TABLE_INDEX_MUST_UPDATE`.
public enum DataTableEvent: Sendable, Hashable {
    /// The table's content changed: a value, a row added, removed or cancelled, a delta accepted.
    case tableChanged
    /// Sorted or filtered views of the table must be rebuilt.
    case indexMustUpdate
}

/// Keeps an observation alive; the observation ends on ``cancel()`` or when this object is released.
public final class DataTableObservation {
    /// Not weak: a weak reference would send every retain and release of the table down the slow path.
    private let table: BackReference<DataTable>
    private let id: Int

    init(table: DataTable, id: Int) {
        self.table = table.back
        self.id = id
    }

    /// Stops the observation.
    public func cancel() { table.object?.observers[id] = nil }

    deinit { cancel() }
}

extension DataTable {
    /// Posted with the table as object when its content changes.
    public static let tableChangedNotification = Notification.Name("RelataTableChanged")
    /// Posted with the table as object when sorted or filtered views must be rebuilt.
    public static let indexMustUpdateNotification = Notification.Name("RelataTableIndexMustUpdate")

    /// Calls `handler` with ``DataTableEvent/tableChanged`` then ``DataTableEvent/indexMustUpdate``
    /// after every visible change. Setting a value, adding, removing, cancelling or
    /// reverting a row, posting an edit and accepting a delta all fire; writes in
    /// edit mode, locking and building a delta do not.
    ///
    /// ```swift
    /// let observation = clients.observe { event in
    ///     if event == .indexMustUpdate { reloadList() }
    /// }
    /// // keep `observation` for as long as you want the calls
    /// ```
    public func observe(_ handler: @escaping (DataTableEvent) -> Void) -> DataTableObservation {
        nextObserverId += 1
        observers[nextObserverId] = handler
        return DataTableObservation(table: self, id: nextObserverId)
    }

    /// Runs `body` with notifications held back, then notifies once if anything changed.
    ///
    /// ```swift
    /// clients.performBatchUpdates {
    ///     for row in clients.rows { try? row.setValue(0.0, forKey: "ClientDiscount") }
    /// }
    /// ```
    ///
    /// It is also how to write many edits of a table with rules: the rules run for each edit as
    /// they do outside a batch, but the batch lets them prepare once for all of its edits
    /// (``DataTableRules/runBatch(_:)``). RelataScript's rules run the batch inside one entry
    /// into JavaScript, so each rule call is nested in it — with a time limit of its own, as
    /// ever — instead of entering JavaScript afresh; microtasks a rule queues then run when the
    /// batch ends rather than when its call returns, as on a data server's replay.
    public func performBatchUpdates<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        guard batchDepth == 0, let rules else { return try holdingNotifications(body) }
        return try holdingNotifications { () throws(E) -> T in try rules.runBatch(body) }
    }

    /// Runs `body` as one batch of each of `tables` (``performBatchUpdates(_:)``): for edits that
    /// span tables, such as orders and their lines imported together.
    ///
    /// ```swift
    /// try DataTable.performBatchUpdates(on: [orders, details]) {
    ///     for line in imported { try details.addNewRow(values: line) }
    /// }
    /// ```
    public static func performBatchUpdates<T, E: Error>(on tables: [DataTable], _ body: () throws(E) -> T) throws(E) -> T {
        try nested(tables[...], in: { (table, body) throws(E) -> T in try table.performBatchUpdates(body) }, body)
    }

    /// ``holdingNotifications(_:)`` of each of `tables`.
    package static func holdingNotifications<T, E: Error>(on tables: [DataTable], _ body: () throws(E) -> T) throws(E) -> T {
        try nested(tables[...], in: { (table, body) throws(E) -> T in try table.holdingNotifications(body) }, body)
    }

    /// `body` run inside `batch` of the first of `tables`, inside `batch` of the second, and so on.
    private static func nested<T, E: Error>(_ tables: ArraySlice<DataTable>, in batch: @escaping (DataTable, () throws(E) -> T) throws(E) -> T,
                                            _ body: () throws(E) -> T) throws(E) -> T {
        guard let first = tables.first else { return try body() }
        // `body` runs inside `batch`'s call, before it returns; it is only passed along.
        return try withoutActuallyEscaping(body) { (body) throws(E) -> T in
            try batch(first) { () throws(E) -> T in try nested(tables.dropFirst(), in: batch, body) }
        }
    }

    /// Runs `body` with notifications held back, then notifies once if anything changed: the
    /// batching of ``performBatchUpdates(_:)`` without the rules' part, for the table's own
    /// work on many rows and for rule engines that run their rules themselves.
    package func holdingNotifications<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        batchDepth += 1
        defer {
            batchDepth -= 1
            if batchDepth == 0 && batchHasChanges {
                batchHasChanges = false
                fireChanged()
            }
        }
        return try body()
    }

    func notifyChanged() {
        if batchDepth > 0 {
            batchHasChanges = true
        } else {
            fireChanged()
        }
    }

    private func fireChanged() {
        for handler in observers.values { handler(.tableChanged) }
        for handler in observers.values { handler(.indexMustUpdate) }
        NotificationCenter.default.post(name: Self.tableChangedNotification, object: self)
        NotificationCenter.default.post(name: Self.indexMustUpdateNotification, object: self)
    }
}

/// The pending changes of one table, as a value that can cross threads,
/// processes and the network.
///
/// A delta is built from a table with ``DataTable/makeDelta()`` (which never
/// changes the table), processed by a data source (each change becomes
/// resolved or failed), and folded back with ``DataTable/accept(_:)``.
///
/// ```swift
/// var delta = try clients.makeDelta()
/// for index in delta.changes.indices {
///     delta.changes[index].status = .resolved
/// }
/// try clients.accept(delta)
/// clients.hasChanges   // false
/// ```
public struct Delta: Sendable, Hashable, Codable {
    /// The table the changes belong to.
    public var tableName: String
    /// The primary-key fields, so a data source can find the rows.
    public var keyFields: [String]
    /// The fields a data source writes: the log-changes fields (keys always among them).
    /// Changes carry the other stored fields too, for the rules to read, but a store leaves them alone.
    public var loggedFields: [String]
    /// The changes, in the order the rows were first changed.
    public var changes: [DeltaChange]

    /// Creates a delta; usually you get one from ``DataTable/makeDelta()`` instead.
    ///
    /// ```swift
    /// let delta = Delta(tableName: "Clients", keyFields: ["ClientId"], loggedFields: ["ClientId", "ClientName"],
    ///                   changes: [DeltaChange(changeId: 1, type: .delete, oldValues: ["ClientId": 7])])
    /// ```
    public init(tableName: String, keyFields: [String], loggedFields: [String], changes: [DeltaChange]) {
        self.tableName = tableName
        self.keyFields = keyFields
        self.loggedFields = loggedFields
        self.changes = changes
    }

    /// The number of changes.
    public var count: Int { changes.count }

    /// True when any change failed.
    public var hasErrors: Bool { changes.indices.contains { changes[$0].status == .failed } }

    /// The changes that failed.
    public var failedChanges: [DeltaChange] {
        // By index: each status is read in place, and only a failed change is copied.
        changes.indices.compactMap { changes[$0].status == .failed ? changes[$0] : nil }
    }

    /// The messages of the failed changes.
    public var errorMessages: [String] { failedChanges.compactMap(\.message) }

    /// The ids of the changes, each read in place (no change copied).
    package var changeIds: IntegerKeySet {
        IntegerKeySet(changes.indices.lazy.map { changes[$0].changeId })
    }

    /// Keeps only the changes whose id `ids` holds; a delta they all are in is left as it is.
    /// Ids are read in place, and only a change kept is copied.
    package mutating func keepChanges(withIdsIn ids: IntegerKeySet) {
        guard !changes.indices.allSatisfy({ ids.contains(Int64(changes[$0].changeId)) }) else { return }
        changes = changes.indices.compactMap { ids.contains(Int64(changes[$0].changeId)) ? changes[$0] : nil }
    }

    /// The change with a change id, or nil.
    public func change(withId changeId: Int) -> DeltaChange? {
        changes.indices.first { changes[$0].changeId == changeId }.map { changes[$0] }
    }
}

extension [Delta] {
    /// The changes of all the deltas.
    package var changeCount: Int { reduce(0) { $0 + $1.changes.count } }
}

/// One row's change inside a ``Delta``.
public struct DeltaChange: Sendable, Hashable, Codable {
    /// What the change does to the data source.
    public enum ChangeType: String, Sendable, Hashable, Codable, CaseIterable {
        case insert, update, delete
    }

    /// Where the change is in its round trip.
    public enum Status: String, Sendable, Hashable, Codable, CaseIterable {
        /// Not processed yet.
        case pending
        /// Applied by the data source.
        case resolved
        /// Rejected by the data source; ``DeltaChange/message`` says why.
        case failed
    }

    /// Identifies the change within its delta and ties it to its row (``DataTableRow/changeId``).
    public var changeId: Int
    /// Insert, update or delete.
    public var type: ChangeType
    /// Original values by field name (updates and deletes).
    public var oldValues: FieldValues
    /// Current values by field name (inserts and updates): after the rules ran where the
    /// change was made. A data server takes them as the client's expectation, not as orders.
    public var newValues: FieldValues
    /// The user's edits of the row, in the user's order (``DataTable/recordsEdits``), which a
    /// data server replays through its rules: nil when the change does not say (it is then
    /// taken as one edit setting ``newValues``); empty when rules alone made the change, and
    /// the server's rules are expected to make it again.
    public var edits: [RowEdit]?
    /// Pending until processed, then resolved or failed.
    public var status: Status
    /// Why the change failed (or a note from the data source), as a user reads it.
    public var message: String?
    /// Why the change failed, structured: kind, event, script location (nil unless failed).
    public var failure: ChangeFailure? {
        get { failureBox?.failure }
        set { failureBox = newValue.map(FailureBox.init) }
    }
    /// Held by reference: few changes fail, and a failure's eight fields would make every
    /// change nearly twice its size (240 bytes instead of 128) in each copy of a batch.
    private var failureBox: FailureBox?
    /// Values the data source assigned or recomputed (an auto-increment key, a server-refreshed field).
    public var refreshedValues: FieldValues

    private enum CodingKeys: String, CodingKey {
        case changeId, type, oldValues, newValues, edits, status, message
        case failureBox = "failure"
        case refreshedValues
    }

    /// Creates a change; usually a table builds them (``DataTable/makeDelta()``).
    ///
    /// ```swift
    /// let change = DeltaChange(changeId: 1, type: .update, oldValues: ["Name": "A"], newValues: ["Name": "B"])
    /// ```
    public init(changeId: Int, type: ChangeType, oldValues: FieldValues = [:], newValues: FieldValues = [:],
                status: Status = .pending, message: String? = nil, failure: ChangeFailure? = nil,
                refreshedValues: FieldValues = [:], edits: [RowEdit]? = nil) {
        self.changeId = changeId
        self.type = type
        self.oldValues = oldValues
        self.newValues = newValues
        self.edits = edits
        self.status = status
        self.message = message
        self.failureBox = failure.map(FailureBox.init)
        self.refreshedValues = refreshedValues
    }

    /// The value that goes to the data source for a field: the new value, else the old one.
    public subscript(field: String) -> Value? {
        newValues[field] ?? oldValues[field]
    }

    /// Marks the change failed with a message (a ``FailureKind/refusal`` unless `kind` says otherwise).
    ///
    /// ```swift
    /// change.fail("names may not contain '!'")
    /// ```
    public mutating func fail(_ message: String, kind: FailureKind = .refusal) {
        fail(ChangeFailure(kind, message))
    }

    /// Marks the change failed; its ``message`` becomes the failure's description
    /// (the bare message for a refusal, with the script location for anything else).
    ///
    /// ```swift
    /// change.fail(ChangeFailure(.constraint, "Orders has no row with OrderId 7"))
    /// ```
    public mutating func fail(_ failure: ChangeFailure) {
        status = .failed
        self.failure = failure
        message = failure.kind == .refusal ? failure.message : failure.description
    }

    /// Marks the change resolved, with values the data source assigned.
    public mutating func resolve(refreshing values: FieldValues = [:]) {
        status = .resolved
        message = nil
        failure = nil
        refreshedValues.merge(values) { $1 }
    }

    /// The names of the fields whose new value differs from the old one.
    public var changedFields: [String] {
        switch type {
        case .insert: return newValues.keys.sorted()
        case .delete: return []
        case .update: return newValues.keys.filter { newValues[$0] != oldValues[$0] }.sorted()
        }
    }
}

import Foundation

/// One edit a user made to a row, as a data server replays it: what the user set,
/// before any rule ran, and where the edit falls in the user's sequence of edits
/// across every table.
///
/// A table that ``DataTable/recordsEdits`` keeps each changed row's edits
/// (``DataTableRow/edits``) and puts them in its delta (``DeltaChange/edits``). The
/// server makes the same edits, in the same order, on its own rows, through the
/// same rules — so a rule runs once per edit on every site, whatever it does.
///
/// ```swift
/// clients.recordsEdits = true
/// try clients.rows[0].setValue("Acme Ltd", forKey: "ClientName")
/// clients.rows[0].edits   // [RowEdit(sequence: 1, kind: .update, values: ["ClientName": "Acme Ltd"])]
/// ```
public struct RowEdit: Sendable, Hashable, Codable {
    /// What the edit did to the row.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// The row was added (``DataTable/addNewRow(values:inEditMode:)``, then posted).
        case insert
        /// Values were set: one posted edit, or one `setValue` outside edit mode.
        case update
        /// The row was removed.
        case delete
    }

    /// The edit's place in the user's sequence: edits made later in the process have
    /// higher numbers, whatever their table (see ``EditSequence``).
    public var sequence: Int64
    /// Insert, update or delete.
    public var kind: Kind
    /// The values the user set, by field name, before any rule ran (empty for a delete,
    /// and for a post in which the user set nothing but the rules may have).
    public var values: FieldValues

    /// Creates an edit; tables make them as their rows are edited.
    ///
    /// ```swift
    /// let edit = RowEdit(sequence: 7, kind: .update, values: ["Status": "open"])
    /// ```
    public init(sequence: Int64, kind: Kind, values: FieldValues = [:]) {
        self.sequence = sequence
        self.kind = kind
        self.values = values
    }
}

/// The process-wide order of users' edits: each edit a table records takes the next number.
///
/// A briefcase's tables bring their edits' numbers with them; loading one moves the
/// sequence past them, so edits made after a restart still come after.
///
/// ```swift
/// let next = EditSequence.next()
/// ```
public enum EditSequence {
    private static let lock = NSLock()
    // nonisolated(unsafe): read and written only while `lock` is held.
    nonisolated(unsafe) private static var last: Int64 = 0

    /// The next number (1, 2, …).
    public static func next() -> Int64 {
        lock.withLock {
            last = last == Int64.max ? last : last + 1
            return last
        }
    }

    /// Makes every later number greater than `sequence`.
    public static func advance(past sequence: Int64) {
        lock.withLock { last = max(last, sequence) }
    }
}

/// Marks the work of rules — JavaScript handlers, a batch validation, values a rule
/// engine applies — so a table does not take the writes made meanwhile for the user's
/// edits (``DataTable/recordsEdits``): a data server's rules make those writes again.
///
/// ```swift
/// try RuleScope.run { try row.setValue(total, forKey: "Total") }   // not one of the user's edits
/// ```
public enum RuleScope {
    /// Set on a thread while rules run on it. Rules run synchronously on the thread that called
    /// them, so a thread-specific value marks them exactly; reading one costs a few nanoseconds,
    /// where a task-local value's push and pop took a tenth of a rule call.
    private static let activeKey: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "no thread-specific key is left for RuleScope (pthread_key_create: \(status))")
        return key
    }()

    /// True while rules run on this thread.
    public static var isActive: Bool { pthread_getspecific(activeKey) != nil }

    /// Runs `body` as the work of rules (inside rules' work already, it just runs: a row's
    /// rules run inside its post's scope).
    public static func run<T>(_ body: () throws -> T) rethrows -> T {
        if isActive { return try body() }
        pthread_setspecific(activeKey, UnsafeRawPointer(bitPattern: 1))
        defer { pthread_setspecific(activeKey, nil) }
        return try body()
    }
}

extension RowEdit.Kind {
    /// The kinds by their number in a briefcase.
    static var briefcaseOrder: [RowEdit.Kind] { allCases }
}

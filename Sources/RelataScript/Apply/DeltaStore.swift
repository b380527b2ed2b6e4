import Relata

/// Where a ``DeltaProcessor`` stores the changes it lets through: one unit of work
/// (a transaction) per ``DeltaProcessor/process(_:store:)``.
///
/// The processor calls, in order: ``begin(_:)``; ``changesMadeByRules()`` after each
/// delta's events (changes rules made through `lda` join the unit); ``store(_:)``
/// once with every delta; then ``commit(_:)`` or ``rollback(_:)`` (``discard(_:)`` after a
/// validation). A
/// ``LocalDataAdapter`` uses ``TableStore`` (the tables themselves); a data server
/// uses one over its database.
///
/// ```swift
/// final class AuditingStore: DeltaStore {
///     func begin(_ deltas: [Delta]) throws { try database.execute("BEGIN") }
///     func changesMadeByRules() throws -> [Delta] { [] }
///     func store(_ deltas: inout [Delta]) throws { … }   // one statement per resolved change
///     func commit(_ deltas: [Delta]) throws { try database.execute("COMMIT") }
///     func rollback(_ deltas: [Delta]) { try? database.execute("ROLLBACK") }
///     func discard(_ deltas: [Delta]) { try? database.execute("ROLLBACK") }
/// }
/// ```
public protocol DeltaStore: AnyObject {
    /// Starts the unit of work for these deltas (their changes are all pending).
    func begin(_ deltas: [Delta]) throws
    /// The changes rules made through `lda` since the last call, as deltas of changes
    /// not yet in the unit; they are processed like the others, in the same unit.
    func changesMadeByRules() throws -> [Delta]
    /// Stores every resolved change. A change the store cannot take (a broken key, a
    /// conflicting edit) is failed with a ``ChangeFailure``; values the store assigns
    /// (auto-increment keys) go to ``DeltaChange/refreshedValues``. Throwing fails the
    /// whole unit, which is then rolled back.
    func store(_ deltas: inout [Delta]) throws
    /// Makes the unit permanent; `deltas` are final. Throwing rolls the unit back.
    func commit(_ deltas: [Delta]) throws
    /// Undoes the unit; every change in `deltas` has failed.
    func rollback(_ deltas: [Delta])
    /// Undoes the unit of a validation (``DeltaProcessor/validate(_:store:)``): `deltas`
    /// hold the verdicts, which are the caller's to use; the store keeps none of them.
    func discard(_ deltas: [Delta])
}

import Foundation
import Relata

/// A batch of changes sent to the server whose answer did not come: the server may have applied
/// it and the answer been lost, or not. Its rows stay locked (``Relata/DataTableRow/isLocked``)
/// until the answer comes, and the adapter's next apply sends it again first with the same
/// ``Relata/ApplyId``: a server that applied it answers from its record, so nothing is applied twice.
///
/// ```swift
/// if let waiting = adapter.unansweredApply {
///     print("\(waiting.deltas.flatMap(\.changes).count) changes await their answer (apply \(waiting.apply))")
///     try await adapter.applyChanges(for: adapter.tables)   // learns their fate, then sends the rest
/// }
/// ```
public struct UnansweredApply: Sendable {
    /// The batch's id, made when it was first sent.
    public let apply: ApplyId
    /// The deltas sent, exactly as sent.
    public let deltas: [Delta]
    /// The batch in the binary form (``Relata/DeltaBinary``), when it was encoded while the
    /// changes were validated: each send in that form sends these bytes.
    let binaryBody: MadeMeanwhile<Data>?

    init(apply: ApplyId, deltas: [Delta], binaryBody: MadeMeanwhile<Data>? = nil) {
        self.apply = apply
        self.deltas = deltas
        self.binaryBody = binaryBody
    }

    /// The request's body: what a retry sends again, and what a briefcase keeps.
    func body() throws -> Data { try DeltaJSON.encode(deltas, apply: apply) }

    /// The request's body in the binary form.
    func binaryForm() throws -> Data { try binaryBody?.value() ?? DeltaBinary.encode(deltas, apply: apply) }
}

/// How an adapter sends an apply again when its answer does not come (a transient failure):
/// ``attempts`` sends in all, the pause before each retry doubling from ``firstDelay`` up to
/// ``maximumDelay``, each a random part of that (so clients that failed together do not retry together).
///
/// ```swift
/// adapter.applyRetries = ApplyRetryPolicy(attempts: 6, firstDelay: .milliseconds(100))
/// adapter.applyRetries = .never   // one send; a lost answer leaves the batch unanswered at once
/// ```
public struct ApplyRetryPolicy: Sendable, Hashable {
    /// Sends in all, the first included (at least 1).
    public var attempts: Int
    /// The longest pause before the first retry.
    public var firstDelay: Duration
    /// The longest pause before any retry.
    public var maximumDelay: Duration

    public init(attempts: Int = 4, firstDelay: Duration = .milliseconds(250), maximumDelay: Duration = .seconds(4)) {
        self.attempts = max(1, attempts)
        self.firstDelay = firstDelay
        self.maximumDelay = maximumDelay
    }

    /// One send, no retry.
    public static let never = ApplyRetryPolicy(attempts: 1)

    /// The pause before send number `attempt` (2 for the first retry): between half and all of
    /// `firstDelay` doubled `attempt - 2` times, at most `maximumDelay`.
    func delay(before attempt: Int) -> Duration {
        var limit = firstDelay
        for _ in 0..<max(0, min(attempt - 2, 30)) where limit < maximumDelay { limit *= 2 }
        limit = min(limit, maximumDelay)
        return limit * Double.random(in: 0.5...1.0)
    }
}

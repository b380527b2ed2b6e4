import Foundation

/// The request bodies a server holds at once, in bytes, bounded: many clients — logged in or
/// not — sending large bodies slowly cannot make the server hold more than `total` bytes of
/// them. A request takes its share chunk by chunk as its body arrives (``Lease/take(_:)``) and
/// gives it all back when it is done.
///
/// ```swift
/// let budget = BodyBudget(total: 256 << 20)
/// try await budget.withLease { lease in
///     for try await chunk in request.body { try lease.take(chunk.readableBytes); … }
/// }
/// ```
final class BodyBudget: @unchecked Sendable {
    // @unchecked Sendable: `used` and every lease's `taken` are read and written only while `lock` is held.
    let total: Int
    private let lock = NSLock()
    private var used = 0

    init(total: Int) {
        self.total = max(0, total)
    }

    /// The bodies held now would go past the budget.
    struct Exhausted: Error, Sendable {}

    /// One request's share of the budget.
    final class Lease: @unchecked Sendable {
        // @unchecked Sendable: `taken` is read and written only while the budget's lock is held.
        private let budget: BodyBudget
        fileprivate var taken = 0

        fileprivate init(_ budget: BodyBudget) { self.budget = budget }

        /// Takes `bytes` more for this request's body.
        /// - Throws: ``Exhausted`` when the bodies held would go past the budget.
        func take(_ bytes: Int) throws {
            try budget.lock.withLock {
                guard bytes <= budget.total - budget.used else { throw Exhausted() }
                budget.used += bytes
                taken += bytes
            }
        }

        fileprivate func giveBack() {
            budget.lock.withLock {
                budget.used -= taken
                taken = 0
            }
        }
    }

    /// Runs `body` with a lease that is given back, whole, when it returns or throws.
    func withLease<Result>(_ body: (Lease) async throws -> Result) async rethrows -> Result {
        let lease = Lease(self)
        defer { lease.giveBack() }
        return try await body(lease)
    }
}

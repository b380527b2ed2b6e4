import Foundation

/// Runs blocking database work on lanes of its own (``BlockingLanes``) rather than on Swift's
/// cooperative pool (one thread per core). A call that waits for a pooled connection — a session lookup
/// while long reads hold every PostgreSQL connection — must not hold one of those few
/// threads: the tasks that would end those reads and give their connections back run there.
///
/// ```swift
/// let session = try await OffCooperativePool.run { try sessions.session(for: token) }
/// ```
enum OffCooperativePool {
    /// Work here may wait long (an answer computed whole, sent to a client that reads slowly): a
    /// lane for each, up to as many threads as Dispatch gives such queues, so no one's waiting
    /// holds up a session lookup.
    private static let lanes = BlockingLanes(limit: 256, label: "relata.blocking-database-work")

    static func run<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await lanes.run(work)
    }
}

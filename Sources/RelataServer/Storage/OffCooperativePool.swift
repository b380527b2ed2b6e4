/// Runs blocking database work on a thread of its own rather than on Swift's cooperative
/// pool (one thread per core). A call that waits for a pooled connection — a session lookup
/// while long reads hold every PostgreSQL connection — must not hold one of those few
/// threads: the tasks that would end those reads and give their connections back run there.
/// The threads are ``BlockingThreads``' (`OffCooperativePoolTests`).
///
/// ```swift
/// let session = try await OffCooperativePool.run { try sessions.session(for: token) }
/// ```
enum OffCooperativePool {
    static func run<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await BlockingThreads.shared.run(work)
    }
}

import Relata

/// Several ``RuleRuntime``s of the same rules, for concurrent units of work: each
/// unit borrows a free runtime (waiting when all are busy), runs on that
/// runtime's own thread, and gives it back. A data server keeps one pool per
/// schema version.
///
/// Units of work must not rely on what an earlier unit left in a runtime: pass
/// everything a unit needs — session, data, deltas — into it
/// (``RuleRuntime/withEnvironment(_:_:)``).
///
/// ```swift
/// let pool = try RuleRuntimePool(size: 4) {
///     let runtime = try RuleRuntime()
///     try runtime.load(RuleScript(contentsOf: ordersScript), forTable: "Orders")
///     return runtime
/// }
/// let verdicts = try await pool.perform { runtime in try validate(deltas, with: runtime, session: session) }
/// ```
public actor RuleRuntimePool {
    private let owners: [RuleRuntimeOwner]
    private var free: [Int]
    private var waiting: [CheckedContinuation<Int, Never>] = []

    /// The number of runtimes.
    public nonisolated let size: Int

    /// Creates `size` runtimes with `makeRuntime` (each compiles the rules anew).
    ///
    /// - Throws: what `makeRuntime` throws (a script that does not compile);
    ///   ``RelataError/Code/invalidArgument`` when `size` is not positive.
    public init(size: Int, makeRuntime: () throws -> RuleRuntime) throws {
        guard size > 0 else { throw RelataError(.invalidArgument, "a pool needs at least one runtime (size \(size))") }
        var owners: [RuleRuntimeOwner] = []
        for index in 0..<size {
            owners.append(RuleRuntimeOwner(try makeRuntime(), name: "relata.rules.\(index)"))
        }
        self.owners = owners
        self.size = size
        free = Array(owners.indices.reversed())
    }

    /// How many runtimes are running a unit of work now.
    public var busy: Int { size - free.count }

    /// Runs a unit of work on a free runtime, waiting for one when all are busy.
    public func perform<Result: Sendable>(_ work: @Sendable (RuleRuntime) throws -> Result) async throws -> Result {
        let index = await checkOut()
        defer { checkIn(index) }
        return try await owners[index].perform(work)
    }

    private func checkOut() async -> Int {
        if let index = free.popLast() { return index }
        return await withCheckedContinuation { waiting.append($0) }
    }

    private func checkIn(_ index: Int) {
        if waiting.isEmpty {
            free.append(index)
        } else {
            waiting.removeFirst().resume(returning: index)
        }
    }
}

import Relata

/// A home for one ``RuleRuntime`` that any task can reach: an actor whose work runs
/// on a thread of its own, one unit at a time, as GRDB's `DatabaseQueue` owns its
/// database connection.
///
/// JavaScriptCore needs serialized access to a virtual machine, not one fixed
/// thread; the owner serializes, and its dedicated thread keeps long scripts off
/// the cooperative pool. The runtime, its engine and every table a unit makes stay
/// inside; only `Sendable` values (deltas, sessions, verdicts) go in and out.
///
/// ```swift
/// let owner = RuleRuntimeOwner(try RuleRuntime.load(schemaScripts))
/// let processed = try await owner.perform { runtime in
///     let store = TableStore(data: TableDataAccess(tables: try makeTables()))
///     return try runtime.withEnvironment(RuleEnvironment(session: session, isServer: true, dataAccess: store.data)) {
///         try DeltaProcessor(runtime: runtime).process(deltas, store: store)
///     }
/// }
/// ```
public actor RuleRuntimeOwner {
    private let executor: DedicatedThreadExecutor
    private let runtime: RuleRuntime

    /// Takes ownership of a runtime; nothing else may keep a reference to it.
    public init(_ runtime: sending RuleRuntime, name: String = "relata.rules") {
        self.runtime = runtime
        executor = DedicatedThreadExecutor(name: name)
    }

    deinit { executor.stop() }

    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }

    /// Runs a unit of work with the runtime, on the owner's thread.
    public func perform<Result: Sendable>(_ work: (RuleRuntime) throws -> Result) throws -> Result {
        try work(runtime)
    }
}

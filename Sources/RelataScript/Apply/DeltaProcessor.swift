import Relata

/// Applies deltas the way a data server does — the same code on every site: it runs
/// the delta and transaction events of a ``RuleRuntime``, enforces the update
/// rules, and stores what passes in a ``DeltaStore``, all in one unit of work.
///
/// For each delta, in ``updateOrder``: `beforeProcessDelta(delta)`, then for each
/// change `beforeProcessDeltaChange(delta, change)` and
/// `afterProcessDeltaChange(delta, change)`, then `afterProcessDelta(delta)`. A
/// `fail(message)` (or any error) in a change's event fails that change; in a
/// delta-wide event it fails every change of the delta that has not failed yet.
/// Changes rules make through `lda` meanwhile join the unit and are processed the same way.
///
/// The store then stores the changes that passed (it may fail some: a broken key).
/// Then `beforeCommit()` runs. If it fails, the store fails, or a change failed in
/// a table whose ``UpdateRule`` says ``UpdateRule/FailureBehavior/rollbackAll``,
/// the unit is rolled back — every change fails, saying why — and `afterRollback()`
/// runs. Otherwise it is committed, and `afterCommit()` runs. Every failed change
/// carries a ``ChangeFailure``.
///
/// ```swift
/// let processor = DeltaProcessor(runtime: runtime, updateOrder: ["Orders", "OrderDetails"])
/// let processed = try runtime.withEnvironment(environment) { try processor.process(deltas, store: store) }
/// ```
public struct DeltaProcessor {
    /// The rules.
    public let runtime: RuleRuntime
    /// The order in which tables are processed (names); tables not listed follow in the order given.
    public var updateOrder: [String]
    /// Update rules by table name (case-insensitive); a table without one applies the others' changes.
    public var updateRules: [String: UpdateRule]

    /// Creates a processor.
    public init(runtime: RuleRuntime, updateOrder: [String] = [], updateRules: [String: UpdateRule] = [:]) {
        self.runtime = runtime
        self.updateOrder = updateOrder
        self.updateRules = Dictionary(updateRules.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
    }

    /// The update rule of a table.
    public func updateRule(forTable name: String) -> UpdateRule {
        updateRules[name.lowercased()] ?? UpdateRule()
    }

    /// Processes deltas in one unit of work of `store`.
    ///
    /// - Returns: the processed deltas — those given, in update order, then those of
    ///   changes rules made — with every change resolved or failed. A change that comes
    ///   in failed (refused by ``EditReplay``) stays failed and is not stored.
    /// - Throws: only when ``DeltaStore/begin(_:)`` throws; nothing was processed then.
    ///   Anything that goes wrong later fails changes instead.
    public func process(_ deltas: consuming [Delta], store: some DeltaStore) throws -> [Delta] {
        var (work, rollback) = try runUntilCommit(consume deltas, store: store)
        if rollback == nil {
            do {
                try store.commit(work)
                fireAfterEvent(.afterCommit, deltas: work)
                return work
            } catch {
                rollback = ChangeFailure(.storeError, "the commit failed: \(error)")
            }
        }
        if let rollback { roll(&work, back: rollback) }
        store.rollback(work)
        fireAfterEvent(.afterRollback, deltas: work)
        return work
    }

    /// The verdicts ``process(_:store:)`` would give, without committing: everything up
    /// to and including `beforeCommit()` runs the same way, then the store discards the
    /// unit (``DeltaStore/discard(_:)``). `afterCommit()` and `afterRollback()` do not run,
    /// since nothing was committed or rolled back; refreshed values are dropped, since
    /// only the data source that stores the changes can give them.
    ///
    /// A client validates this way just before it sends its changes to a data server: a
    /// change that fails here would fail there, with the same message and location.
    ///
    /// ```swift
    /// let verdicts = try processor.validate([try orders.makeDelta()], store: TableStore(data: data))
    /// let refused = verdicts.flatMap(\.failedChanges)
    /// ```
    public func validate(_ deltas: consuming [Delta], store: some DeltaStore) throws -> [Delta] {
        var (work, rollback) = try runUntilCommit(consume deltas, store: store)
        if let rollback { roll(&work, back: rollback) }
        for item in work.indices {
            for change in work[item].changes.indices { work[item].changes[change].refreshedValues = [:] }
        }
        store.discard(work)
        return work
    }

    /// Begins the unit and runs it up to the commit: the delta events (and those of the
    /// changes rules make), the store, the update rules and `beforeCommit()`.
    /// - Returns: the deltas, and why the unit must roll back (nil when it may commit).
    /// Taking `deltas` lets a caller that keeps no copy spare the unit a copy of every change:
    /// the first verdict would otherwise copy the changes the caller still shares.
    private func runUntilCommit(_ deltas: consuming [Delta], store: some DeltaStore) throws -> (work: [Delta], rollback: ChangeFailure?) {
        var work = ordered((consume deltas).filter { !$0.changes.isEmpty })
        try store.begin(work)

        var index = 0
        var rollback: ChangeFailure?
        while index < work.count {
            process(&work[index])
            index += 1
            do {
                work += try store.changesMadeByRules().filter { !$0.changes.isEmpty }
            } catch {
                rollback = ChangeFailure(.storeError, "the changes rules made could not be collected: \(error)")
                break
            }
        }
        if rollback == nil {
            do {
                try store.store(&work)
            } catch {
                rollback = ChangeFailure(.storeError, "the store failed: \(error)")
            }
        }
        rollback = rollback ?? failureRollingBack(work)
        if rollback == nil {
            do {
                try fireTransactionEvent(.beforeCommit, deltas: work)
            } catch {
                rollback = ChangeFailure(FailureKind(describing: error), "beforeCommit failed: \(error)")
            }
        }
        return (work, rollback)
    }

    /// Why the unit must roll back because a change failed in a table whose update rule says so, or nil.
    private func failureRollingBack(_ work: [Delta]) -> ChangeFailure? {
        for delta in work where updateRule(forTable: delta.tableName).onFailure == .rollbackAll {
            guard let failed = delta.failedChanges.first else { continue }
            return ChangeFailure(failed.failure?.kind ?? .refusal, "change \(failed.changeId) of \(delta.tableName) failed: \(failed.message ?? "")")
        }
        return nil
    }

    /// Fails every change that has not failed yet, saying why the unit rolled back.
    private func roll(_ work: inout [Delta], back reason: ChangeFailure) {
        for item in work.indices {
            for change in work[item].changes.indices {
                work[item].changes[change].refreshedValues = [:]
                guard work[item].changes[change].status != .failed else { continue }
                var failure = reason
                failure.message = "not applied: the apply was rolled back (\(reason.message))"
                work[item].changes[change].fail(failure)
            }
        }
    }

    /// Deltas in update order: those named in ``updateOrder`` first, in that order.
    private func ordered(_ deltas: [Delta]) -> [Delta] {
        let rank = Dictionary(updateOrder.enumerated().map { ($1.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        return deltas.enumerated().sorted { a, b in
            let left = rank[a.element.tableName.lowercased()] ?? Int.max, right = rank[b.element.tableName.lowercased()] ?? Int.max
            return left != right ? left < right : a.offset < b.offset
        }.map(\.element)
    }

    /// Runs the delta events of one delta, failing the changes they reject.
    private func process(_ delta: inout Delta) {
        let scripts = runtime.scripts(forTable: delta.tableName).filter { script in
            RuleEvent.deltaEvents.contains { script.handler($0.handlerName) != nil }
        }
        guard !scripts.isEmpty else {
            for index in delta.changes.indices where delta.changes[index].status != .failed { delta.changes[index].resolve() }
            return
        }
        var views: [DeltaView]
        do {
            views = try scripts.map { try DeltaView(delta: delta, context: $0.context) }
        } catch {
            for index in delta.changes.indices where delta.changes[index].status != .failed {
                delta.changes[index].fail(ChangeFailure(describing: error))
            }
            return
        }
        let table = delta.tableName
        func fail(_ index: Int, _ error: any Error, in delta: inout Delta) {
            delta.changes[index].fail(ChangeFailure(describing: error))
            for view in views { view.show(status: delta.changes[index].status, message: delta.changes[index].message, at: index) }
        }
        func run(_ event: RuleEvent, change: Int?) throws {
            for (script, view) in zip(scripts, views) {
                try runtime.fire(event, in: script, table: table) { _, arguments in
                    arguments.append(view.object)
                    if let change { arguments.append(view.changes[change]) }
                }
            }
        }

        do { try run(.beforeProcessDelta, change: nil) } catch {
            for index in delta.changes.indices where delta.changes[index].status != .failed { fail(index, error, in: &delta) }
        }
        if scripts.count == 1 {
            runChangeEvents(of: &delta, in: scripts[0], view: views[0]) { index, error, delta in fail(index, error, in: &delta) }
        } else {
            for index in delta.changes.indices where delta.changes[index].status != .failed {
                do {
                    try run(.beforeProcessDeltaChange, change: index)
                    delta.changes[index].resolve()
                    for view in views { view.show(status: delta.changes[index].status, message: delta.changes[index].message, at: index) }
                    try run(.afterProcessDeltaChange, change: index)
                } catch {
                    fail(index, error, in: &delta)
                }
            }
        }
        do { try run(.afterProcessDelta, change: nil) } catch {
            for index in delta.changes.indices where delta.changes[index].status != .failed { fail(index, error, in: &delta) }
        }
        views.removeAll()
    }

    /// The change events of a delta one script handles, many changes per call into JavaScript
    /// (``RuleRuntime/runChangeEvents(in:table:view:from:to:)``): the same order, verdicts and
    /// statuses shown as one call per event and change gives. A change that came in failed is skipped.
    private func runChangeEvents(of delta: inout Delta, in script: RuleRuntime.CompiledScript, view: DeltaView,
                                 fail: (Int, any Error, inout Delta) -> Void) {
        var index = 0
        while index < delta.changes.count {
            guard delta.changes[index].status != .failed else {
                index += 1
                continue
            }
            var end = index + 1
            while end < delta.changes.count && delta.changes[end].status != .failed { end += 1 }
            let run = runtime.runChangeEvents(in: script, table: delta.tableName, view: view, from: index, to: end)
            for passed in index..<run.reached { delta.changes[passed].resolve() }
            index = run.reached
            guard let failure = run.failure else { continue }
            if failure.afterResolving { delta.changes[index].resolve() }
            fail(index, failure.error, &delta)
            index += 1
        }
    }

    private func fireTransactionEvent(_ event: RuleEvent, deltas: [Delta]) throws {
        for script in transactionScripts(deltas) {
            try runtime.fire(event, in: script, table: script.table) { _, _ in }
        }
    }

    /// `afterCommit` and `afterRollback` cannot change the outcome: their errors are logged.
    private func fireAfterEvent(_ event: RuleEvent, deltas: [Delta]) {
        for script in transactionScripts(deltas) {
            do {
                try runtime.fire(event, in: script, table: script.table) { _, _ in }
            } catch {
                runtime.logger.error("\(event) failed: \(error)")
            }
        }
    }

    /// The schema-wide scripts, then the scripts of the tables in the unit.
    private func transactionScripts(_ deltas: [Delta]) -> [RuleRuntime.CompiledScript] {
        var scripts = runtime.schemaScripts
        for delta in deltas {
            for script in runtime.ownScripts(forTable: delta.tableName) where !scripts.contains(where: { $0 === script }) { scripts.append(script) }
        }
        return scripts
    }
}

extension FailureKind {
    /// The kind of any error that failed a change.
    init(describing error: any Error) {
        self = ChangeFailure(describing: error).kind
    }
}

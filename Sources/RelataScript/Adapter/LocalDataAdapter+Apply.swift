internal import CJavaScriptCore
import Relata

/// Applying changes: the delta and transaction events, then commit or rollback.
extension LocalDataAdapter {
    /// Applies one table's pending changes; see ``applyChanges(for:)-([DataTable])``.
    @discardableResult
    public func applyChanges(for table: DataTable) throws -> Delta {
        try applyChanges(for: [table]).first { $0.tableName == table.name }
            ?? Delta(tableName: table.name, keyFields: table.primaryKeyFields.map(\.name), loggedFields: [], changes: [])
    }

    /// Applies the pending changes of several tables in one transaction.
    ///
    /// For each table, in ``updateOrder``: the delta is built and its rows
    /// locked; `beforeProcessDelta(delta)` runs, then for each change
    /// `beforeProcessDeltaChange(delta, change)` and
    /// `afterProcessDeltaChange(delta, change)`, then `afterProcessDelta(delta)`.
    /// A `fail(message)` (or any error) in a change's event fails that change;
    /// in a delta-wide event it fails every change of the delta that has not
    /// failed yet. Changes made through `lda` meanwhile are processed the same
    /// way, in the same apply.
    ///
    /// Then `beforeCommit()` runs. If it fails, or a change failed in a table
    /// whose ``UpdateRule`` says ``UpdateRule/FailureBehavior/rollbackAll``,
    /// nothing is committed: every change stays pending with a message,
    /// changes made through `lda` are cancelled, and `afterRollback()` runs.
    /// Otherwise the changes that did not fail are committed (accepted into the
    /// tables), failed ones stay pending with their message, and `afterCommit()`
    /// runs.
    ///
    /// ```swift
    /// let deltas = try adapter.applyChanges(for: [orders, orderDetails])
    /// for change in deltas.flatMap(\.failedChanges) { print(change.message ?? "") }
    /// ```
    /// - Returns: the processed deltas, one per table that had changes.
    /// - Throws: ``RelataError`` when a table is not in the adapter or a delta
    ///   cannot be built (a new row lacks a required value); nothing is applied then.
    @discardableResult
    public func applyChanges(for tables: [DataTable]) throws -> [Delta] {
        for table in tables where !self.tables.contains(where: { $0 === table }) { throw unknownTable(table.name) }
        guard !isApplying else {
            throw RelataError(.invalidRowState, "applyChanges was called while an apply is running (from a rule?); changes made by rules join the running apply")
        }
        var work: [(table: DataTable, delta: Delta)] = []
        for table in ordered(tables) {
            let delta = try table.makeDelta()
            if !delta.changes.isEmpty { work.append((table, delta)) }
        }
        for item in work { item.table.lockRows(of: item.delta) }
        isApplying = true
        scriptChanges = []
        applyErrors = [:]
        applyFailureKinds = [:]
        defer {
            isApplying = false
            scriptChanges = []
        }

        var index = 0
        while index < work.count {
            process(&work[index].delta, of: work[index].table)
            index += 1
            work += pendingScriptChanges(after: work)
        }

        failForeignKeyViolations(&work)

        var rollbackReason: String?
        var rollbackKind = FailureKind.refusal
        if let failure = work.lazy.compactMap({ item -> (String, FailureKind)? in
            guard self.updateRule(forTable: item.table.name).onFailure == .rollbackAll,
                  let failed = item.delta.failedChanges.first else { return nil }
            return ("change \(failed.changeId) of \(item.table.name) failed: \(failed.message ?? "")",
                    self.failureKind(forChange: failed.changeId, of: item.table.name) ?? .refusal)
        }).first {
            (rollbackReason, rollbackKind) = failure
        } else {
            do {
                try fireTransactionEvent(.beforeCommit, tables: work.map(\.table))
            } catch {
                rollbackReason = "beforeCommit failed: \(error)"
                rollbackKind = (error as? ScriptError).map(FailureKind.init) ?? .invalidValue
            }
        }

        if let rollbackReason {
            for item in work.indices {
                for change in work[item].delta.changes.indices where work[item].delta.changes[change].status != .failed {
                    work[item].delta.changes[change].fail("not applied: the apply was rolled back (\(rollbackReason))")
                    applyFailureKinds[work[item].table.name.lowercased(), default: [:]][work[item].delta.changes[change].changeId] = rollbackKind
                }
            }
            let scriptMade = Set(scriptChanges.map(ObjectIdentifier.init))
            for item in work {
                try item.table.accept(item.delta)
                for row in item.table.changedRows where scriptMade.contains(ObjectIdentifier(row)) {
                    try? item.table.cancelChange(for: row)
                }
            }
            fireAfterEvent(.afterRollback, tables: work.map(\.table))
        } else {
            for index in work.indices {
                assignKeys(to: &work[index].delta, of: work[index].table)
                try work[index].table.accept(work[index].delta)
            }
            fireAfterEvent(.afterCommit, tables: work.map(\.table))
        }
        return work.map(\.delta)
    }

    /// Fails the changes that would break a declared foreign key if the others were
    /// committed, until none would: a failed parent insert fails the child rows that need it.
    private func failForeignKeyViolations(_ work: inout [(table: DataTable, delta: Delta)]) {
        while true {
            var committing: [ObjectIdentifier: Set<Int>] = [:]
            for item in work {
                committing[ObjectIdentifier(item.table), default: []]
                    .formUnion(item.delta.changes.filter { $0.status != .failed }.map(\.changeId))
            }
            var failedAny = false
            for index in work.indices {
                let violations = work[index].table.foreignKeyViolations(in: work[index].delta, committing: committing)
                for change in work[index].delta.changes.indices {
                    guard let message = violations[work[index].delta.changes[change].changeId] else { continue }
                    work[index].delta.changes[change].fail(message)
                    applyFailureKinds[work[index].table.name.lowercased(), default: [:]][work[index].delta.changes[change].changeId] = .constraint
                    failedAny = true
                }
            }
            if !failedAny { return }
        }
    }

    /// Gives the committed new rows real keys, as a database would: each auto-increment
    /// field with a temporary (negative) key gets the next number above the table's
    /// highest. Accepting the delta then replaces the key wherever it is referenced.
    private func assignKeys(to delta: inout Delta, of table: DataTable) {
        for field in table.fields where field.autoIncrement {
            var next = (table.rows + table.deletedRows).compactMap { $0[field.name].integerValue }.max().map { max($0, 0) + 1 } ?? 1
            for index in delta.changes.indices where delta.changes[index].type == .insert && delta.changes[index].status == .resolved {
                guard let key = delta.changes[index].newValues[field.name]?.integerValue, key < 0 else { continue }
                delta.changes[index].refreshedValues[field.name] = .integer(next)
                next += 1
            }
        }
    }

    /// Tables in update order: those named in ``updateOrder`` first, in that order.
    private func ordered(_ tables: [DataTable]) -> [DataTable] {
        let rank = Dictionary(updateOrder.enumerated().map { ($1.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        return tables.enumerated().sorted { a, b in
            let left = rank[a.element.name.lowercased()] ?? Int.max, right = rank[b.element.name.lowercased()] ?? Int.max
            return left != right ? left < right : a.offset < b.offset
        }.map(\.element)
    }

    /// Deltas of the changes rules made through `lda` that no delta carries yet.
    private func pendingScriptChanges(after work: [(table: DataTable, delta: Delta)]) -> [(table: DataTable, delta: Delta)] {
        var carried: Set<String> = []
        for item in work { for change in item.delta.changes { carried.insert("\(ObjectIdentifier(item.table)):\(change.changeId)") } }
        var result: [(table: DataTable, delta: Delta)] = []
        var seenTables: [ObjectIdentifier] = []
        for row in scriptChanges where !seenTables.contains(ObjectIdentifier(row.table)) {
            seenTables.append(ObjectIdentifier(row.table))
        }
        for tableId in seenTables {
            guard let table = tables.first(where: { ObjectIdentifier($0) == tableId }), var delta = try? table.makeDelta() else { continue }
            let wanted = Set(scriptChanges.filter { $0.table === table }.map(\.changeId))
            delta.changes = delta.changes.filter {
                wanted.contains($0.changeId) && !carried.contains("\(ObjectIdentifier(table)):\($0.changeId)")
            }
            if !delta.changes.isEmpty {
                table.lockRows(of: delta)
                result.append((table, delta))
            }
        }
        return result
    }

    /// Runs the delta events of one delta, failing the changes they reject.
    private func process(_ delta: inout Delta, of table: DataTable) {
        let scripts = host.scripts(forTable: table.name).filter { script in
            RuleEvent.deltaEvents.contains { script.handler($0.handlerName) != nil }
        }
        guard !scripts.isEmpty else {
            for index in delta.changes.indices { delta.changes[index].resolve() }
            return
        }
        var views: [DeltaView]
        do {
            views = try scripts.map { try DeltaView(delta: delta, context: $0.context) }
        } catch {
            for index in delta.changes.indices { delta.changes[index].fail(Self.message(of: error)) }
            return
        }
        func record(_ error: any Error, change: Int) {
            if let error = error as? ScriptError { applyErrors[table.name.lowercased(), default: [:]][change] = error }
            applyFailureKinds[table.name.lowercased(), default: [:]][change] = Self.failureKind(of: error)
        }

        func failAll(_ error: any Error) {
            for index in delta.changes.indices where delta.changes[index].status != .failed {
                delta.changes[index].fail(Self.message(of: error))
                record(error, change: delta.changes[index].changeId)
                for view in views { view.update(delta.changes[index], at: index) }
            }
        }
        func run(_ event: RuleEvent, change: Int?) throws {
            for (script, view) in zip(scripts, views) {
                try host.fire(event, in: script, table: table.name) { _ in
                    change.map { [view.object, view.changes[$0]] } ?? [view.object]
                }
            }
        }

        do { try run(.beforeProcessDelta, change: nil) } catch { failAll(error) }
        for index in delta.changes.indices where delta.changes[index].status != .failed {
            do {
                try run(.beforeProcessDeltaChange, change: index)
                delta.changes[index].resolve()
                for view in views { view.update(delta.changes[index], at: index) }
                try run(.afterProcessDeltaChange, change: index)
            } catch {
                delta.changes[index].fail(Self.message(of: error))
                record(error, change: delta.changes[index].changeId)
                for view in views { view.update(delta.changes[index], at: index) }
            }
        }
        do { try run(.afterProcessDelta, change: nil) } catch { failAll(error) }
        views.removeAll()
    }

    /// The rule error — with its script location, event and row — that failed a
    /// change in the latest ``applyChanges(for:)-([DataTable])``; a ``DeltaChange``
    /// carries only the message, as a data server sends it.
    ///
    /// ```swift
    /// for change in delta.failedChanges {
    ///     if let error = adapter.ruleError(forChange: change.changeId, of: delta.tableName) {
    ///         print(error.location ?? "", error.message)
    ///     }
    /// }
    /// ```
    public func ruleError(forChange changeId: Int, of table: String) -> ScriptError? {
        applyErrors[table.lowercased()]?[changeId]
    }

    /// Why a change failed in the latest ``applyChanges(for:)-([DataTable])``: a rule's
    /// refusal, a broken rule, a value or a key constraint (nil for a change that did not fail).
    ///
    /// ```swift
    /// for change in delta.failedChanges where adapter.failureKind(forChange: change.changeId, of: delta.tableName) == .ruleError {
    ///     print("a rule is broken:", change.message ?? "")
    /// }
    /// ```
    public func failureKind(forChange changeId: Int, of table: String) -> FailureKind? {
        applyFailureKinds[table.lowercased()]?[changeId]
    }

    /// The kind of an error that failed a change or an edit.
    static func failureKind(of error: any Error) -> FailureKind {
        switch error {
        case let error as ScriptError: return FailureKind(error)
        case let error as RelataError: return error.code == .constraintViolation ? .constraint : .invalidValue
        default: return .ruleError
        }
    }

    /// The error of the first change that failed in `deltas` (as an apply returned them):
    /// the rule's error with its location when a rule failed it, else the change's message.
    /// Tests use it to treat a partly failed apply as a failure.
    ///
    /// ```swift
    /// let deltas = try adapter.applyChanges(for: adapter.tables)
    /// if let failure = adapter.firstFailure(in: deltas) { throw failure }
    /// ```
    public func firstFailure(in deltas: [Delta]) -> ScriptError? {
        guard let delta = deltas.first(where: \.hasErrors), let change = delta.failedChanges.first else { return nil }
        guard var error = ruleError(forChange: change.changeId, of: delta.tableName) else {
            return ScriptError(.ruleFailed, change.message ?? "the change failed", table: delta.tableName)
        }
        error.message = change.message ?? error.message
        return error
    }

    /// A rule's `fail` message as it is; any other error with its location.
    static func message(of error: any Error) -> String {
        if let error = error as? ScriptError, error.kind == .ruleFailed { return error.message }
        return "\(error)"
    }

    private func fireTransactionEvent(_ event: RuleEvent, tables: [DataTable]) throws {
        for script in transactionScripts(tables) {
            try host.fire(event, in: script, table: script.table) { _ in [] }
        }
    }

    /// `afterCommit` and `afterRollback` cannot change the outcome: their errors are logged.
    private func fireAfterEvent(_ event: RuleEvent, tables: [DataTable]) {
        for script in transactionScripts(tables) {
            do {
                try host.fire(event, in: script, table: script.table) { _ in [] }
            } catch {
                host.logger.error("\(event) failed: \(error)")
            }
        }
    }

    /// The schema-wide script, then the scripts of the tables in the apply.
    private func transactionScripts(_ tables: [DataTable]) -> [RuleHost.CompiledScript] {
        var scripts = [host.schemaScript].compactMap { $0 }
        for table in tables {
            if let script = host.script(forTable: table.name), !scripts.contains(where: { $0 === script }) { scripts.append(script) }
        }
        return scripts
    }
}

/// A delta as one script sees it: `delta.name`, `delta.count`, `delta[i]`, `delta.changes`.
final class DeltaView {
    let context: ScriptContext
    let object: JSObjectRef
    let changes: [JSObjectRef]

    init(delta: Delta, context: ScriptContext) throws {
        self.context = context
        let make = try context.helper("change")
        changes = try delta.changes.map { change in
            let names = Array(Set(change.oldValues.keys).union(change.newValues.keys)).sorted()
            let arguments: [JSValueRef] = [
                context.string(change.type.rawValue), JSValueMakeNumber(context.ref, Double(change.changeId)),
                context.makeArray(names.map { context.string($0) }),
                try context.object(from: change.oldValues), try context.object(from: change.newValues),
                context.string(change.status.rawValue), change.message.map { context.string($0) } ?? JSValueMakeNull(context.ref),
            ]
            guard let object = JSValueToObject(context.ref, try context.call(make, arguments), nil) else {
                throw ScriptError(.runtime, "could not show change \(change.changeId) of \(delta.tableName) to the rules")
            }
            return object
        }
        object = context.makeObject()
        context.setProperty("name", of: object, to: context.string(delta.tableName), readOnly: true)
        context.setProperty("count", of: object, to: JSValueMakeNumber(context.ref, Double(changes.count)), readOnly: true)
        context.setProperty("length", of: object, to: JSValueMakeNumber(context.ref, Double(changes.count)), readOnly: true)
        context.setProperty("changes", of: object, to: context.makeArray(changes), readOnly: true)
        for (index, change) in changes.enumerated() {
            JSObjectSetPropertyAtIndex(context.ref, object, UInt32(truncatingIfNeeded: index), change, nil)
        }
        JSValueProtect(context.ref, object)
    }

    deinit { JSValueUnprotect(context.ref, object) }

    /// Shows a change's new status and message to the script.
    func update(_ change: DeltaChange, at index: Int) {
        context.setProperty("status", of: changes[index], to: context.string(change.status.rawValue))
        context.setProperty("message", of: changes[index], to: change.message.map { context.string($0) } ?? JSValueMakeNull(context.ref))
    }
}

extension ScriptContext {
    /// A plain object of field values, keyed by field name (any name, `__proto__` included).
    func object(from values: [String: Value]) throws -> JSObjectRef {
        let sorted = values.sorted { $0.key < $1.key }
        let made = try call(helper("valuesObject"), [makeArray(sorted.map { string($0.key) }), makeArray(sorted.map { jsValue($0.value) })])
        guard let object = JSValueToObject(ref, made, nil) else { throw ScriptError(.runtime, "could not show field values to the rules") }
        return object
    }
}

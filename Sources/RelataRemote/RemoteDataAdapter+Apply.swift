import Foundation
import Relata
import RelataScript

/// Applying changes: validated here with the server's rules, sent as deltas, and the
/// processed deltas folded back into the tables.
extension RemoteDataAdapter {
    /// Applies one table's pending changes; see ``applyChanges(for:)-([DataTable])``.
    @discardableResult
    nonisolated(nonsending) public func applyChanges(for table: DataTable) async throws -> Delta {
        try await applyChanges(for: [table]).first { $0.tableName.equalsIgnoringCase(table.name) }
            ?? Delta(tableName: table.name, keyFields: table.primaryKeyFields.map(\.name), loggedFields: [], changes: [])
    }

    /// Applies the pending changes of several of the adapter's tables in one server transaction.
    ///
    /// 1. With ``validatesChangesLocally`` (the default) the server's rules run here first, as
    ///    an apply would run them (``LocalDataAdapter/validateApply(for:)``): a change they
    ///    refuse fails at once, with the server's message and script location, and is not sent.
    /// 2. The other changes go to the server as one batch with a new ``Relata/ApplyId``; their rows
    ///    are locked until the answer is in. A transient failure sends the batch again (``applyRetries``,
    ///    ``standbyURLs``): the server applies a batch once, whatever number of times it comes.
    ///    A batch whose answer never came (``unansweredApply``) is sent again first.
    /// 3. The processed deltas are folded back (``DataTable/accept(_:)``): applied changes become
    ///    the rows' originals, real keys replace temporary ones (in referencing rows too),
    ///    refreshed values land; a change the server refused stays pending with its message.
    ///
    /// Nothing typed is lost: a failed change keeps the user's values, and fixing and applying
    /// again sends the right original and new values. The delegate hears each failed change.
    ///
    /// ```swift
    /// let deltas = try await adapter.applyChanges(for: [orders, details])
    /// for change in deltas.flatMap(\.failedChanges) { print(change.changeId, change.message ?? "") }
    /// ```
    /// - Returns: one delta per table that had changes: every change resolved or failed.
    /// - Throws: ``RemoteError``: ``RemoteError/Kind/transient`` (network, server failure, answer cut
    ///   short) once ``applyRetries`` sent the batch again without an answer: the batch stays
    ///   ``unansweredApply``, its rows locked, and the next apply sends it again first — with its
    ///   ``Relata/ApplyId``, so the server applies it once. A request the server refused as a
    ///   whole (a permission, an expired apply id) marks the changes sent failed with its message.
    ///   ``RelataError`` for a table that is not the adapter's, or a change that cannot make a delta.
    @discardableResult
    nonisolated(nonsending) public func applyChanges(for tables: [DataTable]) async throws -> [Delta] {
        try await applyChanges(for: tables, listener: nil)
    }

    nonisolated(nonsending) func applyChanges(for tables: [DataTable], listener: (any RemoteDataAdapterDelegate)?) async throws -> [Delta] {
        do {
            let rules = try await rules(owning: tables)
            // A batch whose answer never came goes first, as it was: its fate decides what is still to send.
            var answered: [Delta] = []
            if let waiting = unansweredApply {
                do {
                    answered = try await deliver(waiting)
                } catch let error as RemoteError where error.code == RemoteError.staleRulesCode {
                    _ = try await downloadRules()   // never applied: its changes are pending again and go below
                }
            }
            var (sending, refused) = try prepare(tables, rules: rules, leaving: answered)
            var processed: [Delta]
            do {
                processed = try await send(sending, tables: tables)
            } catch let error as RemoteError where error.code == RemoteError.staleRulesCode {
                // The server's rules changed since they were downloaded: take them, validate again, resend once.
                _ = try await downloadRules()
                (sending, refused) = try prepare(tables, rules: rules, leaving: answered)
                processed = try await send(sending, tables: tables)
            }
            // The batch sent is freed meanwhile, not before the answer is returned.
            let sent = sending.deltas.changeCount
            FreedMeanwhile.free(consume sending, coveringChanges: sent)
            for local in refused + answered {
                if let index = processed.firstIndex(where: { $0.tableName.equalsIgnoringCase(local.tableName) }) {
                    processed[index].changes = (local.changes + processed[index].changes).sorted { $0.changeId < $1.changeId }
                } else {
                    processed.append(local)
                }
            }
            report(processed, tables: tables, listener: listener)
            return processed
        } catch {
            notify(listener) { $0.remoteDataAdapter(self, didFailWithError: error) }
            throw error
        }
    }

    /// The verdicts an apply of these tables would get, from the server's rules run here — without
    /// sending anything or changing any row (see ``LocalDataAdapter/validateApply(for:)``).
    ///
    /// ```swift
    /// let verdicts = try await adapter.validateChanges(for: [orders, details])
    /// let refused = verdicts.flatMap(\.failedChanges)
    /// ```
    /// - Returns: one delta per table with changes, every change resolved (it would be sent) or
    ///   failed (with the rule's message and location).
    nonisolated(nonsending) public func validateChanges(for tables: [DataTable]) async throws -> [Delta] {
        let rules = try await rules(owning: tables)
        let pending = rules.tablesToRevalidate
        let verdicts = try localVerdicts(for: tables, rules: rules)
        rules.tablesToRevalidate = pending   // a validation alone does not settle them
        let names = Set(tables.map { $0.name.lowercased() })
        return verdicts.filter { names.contains($0.tableName.lowercased()) }
    }

    /// The batch to send, and the changes local validation refused (already recorded on their rows);
    /// none of the changes `answered` just now.
    private func prepare(_ tables: [DataTable], rules: LoadedRules, leaving answered: [Delta] = []) throws -> (sending: UnansweredApply, refused: [Delta]) {
        let made = try tables.map { try $0.makeDelta() }
        var deltas = made.map { delta in
            let done = Set(answered.filter { $0.tableName.equalsIgnoringCase(delta.tableName) }.flatMap(\.changes).map(\.changeId))
            guard !done.isEmpty else { return delta }
            var delta = delta
            delta.changes.removeAll { done.contains($0.changeId) }
            return delta
        }.filter { !$0.changes.isEmpty }
        let apply = ApplyId()
        guard validatesChangesLocally, !deltas.isEmpty else { return (UnansweredApply(apply: apply, deltas: deltas), []) }
        // Encoded meanwhile, as most batches are sent whole: a refused change makes it wasted work.
        let unchecked = deltas
        let encoded = serverReadsBinaryDeltas ? MadeMeanwhile(coveringChanges: unchecked.changeCount) { try DeltaBinary.encode(unchecked, apply: apply) } : nil
        let verdicts = try localVerdicts(for: tables, made: made, rules: rules)
        var refused: [Delta] = []
        for index in deltas.indices {
            let name = deltas[index].tableName
            let failed = verdicts.first { $0.tableName == name }?.failedChanges ?? []
            guard !failed.isEmpty else { continue }
            let ids = Set(failed.map(\.changeId))
            var local = deltas[index]
            local.changes = failed
            try table(in: tables, named: name).accept(local)
            refused.append(local)
            deltas[index].changes.removeAll { ids.contains($0.changeId) }
        }
        guard refused.isEmpty else { return (UnansweredApply(apply: apply, deltas: deltas.filter { !$0.changes.isEmpty }), refused) }
        return (UnansweredApply(apply: apply, deltas: deltas, binaryBody: encoded), [])
    }

    /// The verdicts of the server's rules run here: the apply's validation, and after the rules
    /// changed, the row rules again over the pending changes they checked (as the server replays them);
    /// then a change the session may not make (the server's permissions, from GetSchema) fails
    /// with the server's words.
    private func localVerdicts(for tables: [DataTable], made deltas: [Delta]? = nil, rules: LoadedRules) throws -> [Delta] {
        var verdicts = try deltas.map { try rules.adapter.validateApply($0, of: tables) } ?? rules.adapter.validateApply(for: tables)
        if !rules.tablesToRevalidate.isEmpty { verdicts = try failingRowViolations(in: verdicts, tables: tables, rules: rules) }
        guard let allowed = rules.allowedOperations else { return verdicts }
        let roles = session?.roles ?? []
        for delta in verdicts.indices {
            let table = verdicts[delta].tableName
            let operations = allowed[table.lowercased()] ?? []
            for change in verdicts[delta].changes.indices where verdicts[delta].changes[change].status != .failed {
                let operation = verdicts[delta].changes[change].type.rawValue
                guard !operations.contains(operation) else { continue }
                let may = rules.rolesAllowed[table.lowercased()]?[operation]
                verdicts[delta].changes[change].fail(RelataError.permissionDenied(operation, on: table, roles: roles, allowedRoles: may).message, kind: .refusal)
            }
        }
        return verdicts
    }

    /// The row rules run again over the pending changes of the tables that the old rules checked;
    /// a change they refuse fails.
    private func failingRowViolations(in verdicts: [Delta], tables: [DataTable], rules: LoadedRules) throws -> [Delta] {
        var verdicts = verdicts
        for table in tables where rules.tablesToRevalidate.remove(table.name.lowercased()) != nil {
            for violation in try rules.adapter.validateChanges(for: table) {
                guard let delta = verdicts.firstIndex(where: { $0.tableName == table.name }),
                      let change = verdicts[delta].changes.firstIndex(where: { $0.changeId == violation.row.changeId }) else { continue }
                verdicts[delta].changes[change].fail(ChangeFailure(violation.error))
            }
        }
        return verdicts
    }

    /// Sends a new batch with its rows locked, and folds the answer back.
    nonisolated(nonsending) private func send(_ batch: UnansweredApply, tables: [DataTable]) async throws -> [Delta] {
        guard !batch.deltas.isEmpty else { return [] }
        for delta in batch.deltas { try table(in: tables, named: delta.tableName).lockRows(of: delta) }
        unansweredApply = batch
        return try await deliver(batch)
    }

    /// Sends a batch until an answer comes — again after a transient failure, per ``applyRetries``,
    /// to ``targetURL`` and the ``standbyURLs`` in turn — and folds the answer back.
    ///
    /// An answer ends the batch: the processed deltas, or a refusal of the whole request (its
    /// changes then fail with the server's words, or for stale rules stay pending, unlocked). Without
    /// one the batch stays ``unansweredApply``, its rows locked, and the last failure is thrown.
    nonisolated(nonsending) private func deliver(_ batch: UnansweredApply) async throws -> [Delta] {
        let instances = [targetURL] + standbyURLs.filter { $0 != targetURL }
        var attempt = 1
        let returned: [Delta]
        while true {
            do {
                // In the binary form to a server that said it reads it, else as JSON; the answer need
                // not repeat the values the batch carries (an older server sends them all the same).
                let binary = serverReadsBinaryDeltas
                let form = binary ? DeltaBinary.contentType : nil
                let answer = try await call(dataService, "UpdateData", body: binary ? try batch.binaryForm() : try batch.body(),
                                            prefer: "return=minimal", contentType: form, accept: form)
                noteDeltaForms(of: answer)
                do {
                    returned = answer.contentType?.hasPrefix(DeltaBinary.contentType) == true
                        ? try DeltaBinary.decode(answer.body) : try DeltaJSON.decode(answer.body)
                } catch {
                    throw RemoteError.invalidResponse("UpdateData", error)   // transient: the batch's record answers again
                }
                break
            } catch let error as RemoteError where error.code == RemoteError.staleRulesCode {
                unansweredApply = nil   // refused before anything ran: the changes go again once validated with the new rules
                for delta in batch.deltas { try ownTable(named: delta.tableName).unlockRows(of: delta) }
                throw error
            } catch let error as RemoteError where error.kind == .permanent {
                unansweredApply = nil
                for delta in batch.deltas {
                    let table = try ownTable(named: delta.tableName)
                    var failed = table.keepingKnownChanges(of: delta)
                    for index in failed.changes.indices { failed.changes[index].fail(error.message, kind: .refusal) }
                    try table.accept(failed)
                }
                throw error
            } catch let error as RemoteError where error.kind == .transient && attempt < applyRetries.attempts {
                logger.info("apply \(batch.apply) got no answer (\(error)); sending it again")
                try await Task.sleep(for: applyRetries.delay(before: attempt + 1))
                if instances.count > 1 {
                    targetURL = instances[attempt % instances.count]
                    serverReadsBinaryDeltas = false   // another instance, perhaps of another version: JSON until it says
                }
                attempt += 1
            }
        }
        unansweredApply = nil
        do {
            return try batch.deltas.map { sent in
                let table = try ownTable(named: sent.tableName)
                var processed = returned.first { $0.tableName.equalsIgnoringCase(sent.tableName) } ?? sent
                processed.tableName = table.name
                processed.keepChanges(withIdsIn: sent.changeIds)   // the server's rules may change rows the client did not send
                processed.restoreValuesLeftOut(from: sent)
                processed = table.keepingKnownChanges(of: processed)
                try table.accept(processed)
                table.unlockRows(of: sent)
                return processed
            }
        } catch {
            for delta in batch.deltas { try? ownTable(named: delta.tableName).unlockRows(of: delta) }
            throw RemoteError.invalidResponse("UpdateData", error)
        }
    }

    private func report(_ deltas: [Delta], tables: [DataTable], listener: (any RemoteDataAdapterDelegate)?) {
        for delta in deltas {
            guard let table = try? table(in: tables, named: delta.tableName) else { continue }
            for change in delta.failedChanges { notify(listener) { $0.remoteDataAdapter(self, didFailChange: change, of: table) } }
        }
        notify(listener) { $0.remoteDataAdapter(self, didApplyChanges: deltas) }
    }

    private func table(in tables: [DataTable], named name: String) throws -> DataTable {
        guard let table = tables.first(where: { $0.name.equalsIgnoringCase(name) }) else {
            throw RelataError(.unknownTable, "no table \(name) among those applied", table: name)
        }
        return table
    }
}

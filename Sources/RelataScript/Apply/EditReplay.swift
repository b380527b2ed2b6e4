import Relata

/// What a data server does with a client's changes before it processes them: it makes the
/// user's edits again, in the user's order, on its own rows, through the same rules.
///
/// A client's change carries what the user set (``DeltaChange/edits``) and where each edit
/// falls in the user's sequence across tables; its ``DeltaChange/newValues`` are only the
/// client's expectation. So the server never runs a rule over values a rule already made — a
/// rule runs once per edit on every site, idempotent or not — and rules that read other
/// tables through `lda` see, edit by edit, what they saw where the user made the edits:
///
/// - edits of every delta are sorted by their sequence and made one by one: an insert adds
///   the row (`onNewRow`, then the user's values, `beforePost`, `beforeInsert`), an update
///   sets the values in one posted edit (`beforePost`, `beforeUpdate(row, old)`), a delete
///   removes the row (`beforeDelete`) — the same row path as everywhere else;
/// - before anything is made, each update and delete finds its stored row by its original
///   key and compares the logged fields with the change's original values: a difference is
///   a ``FailureKind/conflict`` naming the fields that changed underneath, and a row that is
///   gone is one too;
/// - a change without edits (`edits` absent: a hand-made request) counts as one edit of its
///   ``DeltaChange/newValues``, made before the edits that carry a sequence, in request order;
/// - a change whose edits are empty was made by the client's rules: the server's rules are
///   expected to make it again, and the row they change (same table and key, or the same
///   rank among the rows the rules added) answers for it. An update they did not make is
///   answered with the stored values; an insert or delete they did not make fails;
/// - an edit the server's rules refuse fails its change, and the row gets its stored values back.
///
/// ```swift
/// let replayed = EditReplay(runtime: runtime).replay(deltas, on: data.tables) { try data.table($0) }
/// let answer = replayed.answer(try processor.process(replayed.deltas, store: store))
/// ```
public struct EditReplay {
    /// The rules.
    public let runtime: RuleRuntime

    /// Creates a replay with a runtime's rules.
    public init(runtime: RuleRuntime) {
        self.runtime = runtime
    }

    /// Refuses, before anything runs, edits no client makes: a sequence used twice in the
    /// request, or edits that do not fit their change (an insert begins with its insert, or
    /// with an update when rules added the row; a delete ends with its delete, or with an
    /// update when rules deleted it; every other edit is an update; sequences rise).
    ///
    /// - Throws: ``RelataError/Code/invalidDelta`` naming the table and change.
    public static func checkEdits(of deltas: [Delta]) throws {
        // Sequences that rise across the request are unique without a set of them; a request
        // whose sequences do not rise is checked again from the start with one.
        if try !checkEdits(of: deltas, keepingEverySequence: false) { _ = try checkEdits(of: deltas, keepingEverySequence: true) }
    }

    /// ``checkEdits(of:)``: false when, not keeping every sequence, one did not rise.
    private static func checkEdits(of deltas: [Delta], keepingEverySequence: Bool) throws -> Bool {
        var sequences: Set<Int64> = [], last: Int64 = 0
        if keepingEverySequence { sequences.reserveCapacity(deltas.changeCount) }   // most changes carry one edit
        for delta in deltas {
            for position in delta.changes.indices {   // read in place: a loop over the changes would copy each
                guard let edits = delta.changes[position].edits, !edits.isEmpty else { continue }
                let changeId = delta.changes[position].changeId, type = delta.changes[position].type
                func refuse(_ why: String) -> RelataError {
                    RelataError(.invalidDelta, "change \(changeId): \(why)", table: delta.tableName)
                }
                for index in edits.indices {   // each edit read in place, its values not copied
                    let sequence = edits[index].sequence, kind = edits[index].kind
                    guard sequence > 0 else { throw refuse("an edit's sequence is a positive number, not \(sequence)") }
                    if keepingEverySequence {
                        guard sequences.insert(sequence).inserted else { throw refuse("edit sequence \(sequence) is used twice in the request") }
                    } else {
                        guard sequence > last else { return false }
                        last = sequence
                    }
                    if index > 0, sequence <= edits[index - 1].sequence { throw refuse("its edits are not in rising sequence") }
                    // A new row removed again is an insert whose edits end with the delete.
                    let insertAllowed = type == .insert && index == 0
                    let deleteAllowed = type != .update && index == edits.count - 1
                    switch kind {
                    case .update: break
                    case .insert where insertAllowed: break
                    case .delete where deleteAllowed: break
                    default:
                        let allowed: [RowEdit.Kind] = [.update] + (insertAllowed ? [.insert] : []) + (deleteAllowed ? [.delete] : [])
                        throw refuse("edit \(sequence) is \(kind.rawValue), where \(type.rawValue) change's edit \(index + 1) of \(edits.count) can only be \(allowed.map(\.rawValue).joined(separator: " or "))")
                    }
                    if kind == .delete, !edits[index].values.isEmpty { throw refuse("a delete sets no values") }
                }
            }
        }
        return true
    }

    /// Replays `deltas` on the tables of `data`.
    ///
    /// - Parameters:
    ///   - data: the unit's tables, holding (unchanged) the stored rows the updates and deletes
    ///     touch; rules' changes to any of them join the result.
    ///   - table: the unit's table with a name, made on first use, the runtime's rules attached.
    /// - Returns: the deltas to process — one per incoming delta, with the changes the edits made
    ///   (with the incoming ids) and those refused (failed, with their ``ChangeFailure``), then
    ///   the changes the server's rules made to other rows; then the deltas of other tables the
    ///   rules changed — and the changes already settled.
    public func replay(_ deltas: [Delta], on data: TableDataAccess, table: (String) throws -> DataTable) -> Replayed {
        var work = Work(deltas)
        var tables: [DataTable?] = []
        for (position, delta) in deltas.enumerated() {
            do {
                let found = try table(delta.tableName)
                var ids = IntegerKeySet(), highest = 0
                for index in delta.changes.indices {   // read in place: a loop over the changes would copy each
                    let id = delta.changes[index].changeId
                    guard id > 0 else { throw RelataError(.invalidDelta, "change ids are positive; the delta has \(id)", table: delta.tableName) }
                    guard ids.insert(Int64(id)) else { throw RelataError(.invalidDelta, "the delta has change \(id) twice", table: delta.tableName) }
                    highest = max(highest, id)
                }
                tables.append(found)
                found.reserveChangeIds(through: highest)
                work.collect(delta, at: position, in: found)
            } catch {
                tables.append(nil)
                for change in delta.changes { work.failed[Work.Ref(delta: position, change: change.changeId)] = ChangeFailure(describing: error) }
            }
        }
        // One notice to each table's observers for the whole replay, not one per edit.
        let touched = tables.compactMap { $0 }
        DataTable.holdingNotifications(on: touched) {
            let order = Self.inSequenceOrder(work.steps)
            // The steps are read where they are, not copied one by one.
            let steps = work.steps
            steps.withUnsafeBufferPointer { steps in
                runtime.inOneEntry(steps: order.count) { index in
                    let position = order[index], ref = steps[position].ref
                    guard work.failure(of: ref) == nil, let table = tables[ref.delta] else { return }
                    do {
                        try make(steps[position], of: deltas[ref.delta], on: table, work: &work)
                    } catch {
                        work.failed[ref] = failure(describing: error)
                        if let row = work.rows[steps[position].ordinal], row.isInTable { try? table.withoutRules { try table.cancelChange(for: row) } }
                    }
                }
            }
        }
        return result(of: deltas, tables: tables, data: data, work: &work)
    }

    /// The steps' positions in the order their edits were made (by sequence, then request
    /// order); the steps themselves are not copied, and steps already in order are not sorted.
    private static func inSequenceOrder(_ steps: [Work.Step]) -> [Int] {
        func precedes(_ one: Int, _ other: Int) -> Bool { (steps[one].sequence, steps[one].order) < (steps[other].sequence, steps[other].order) }
        let positions = Array(steps.indices)
        return positions.dropFirst().allSatisfy { precedes($0 - 1, $0) } ? positions : positions.sorted(by: precedes)
    }

    /// What a replay leaves.
    public struct Replayed {
        /// The deltas to process (``DeltaProcessor``).
        public var deltas: [Delta]
        /// Changes with nothing left to store, already resolved or failed: edits that left
        /// their row as stored, a new row removed again, a change only the client's rules made.
        public var settled: [Delta]

        /// The deltas to process, handed over: the replay keeps no copy of them, so processing
        /// resolves each change in place instead of copying the batch first.
        ///
        /// ```swift
        /// var replayed = EditReplay(runtime: runtime).replay(deltas, on: data) { try data.table($0) }
        /// let answer = replayed.answer(try processor.process(replayed.takeDeltas(), store: store))
        /// ```
        public mutating func takeDeltas() -> [Delta] {
            let taken = deltas
            deltas = []
            return taken
        }

        /// The answer to the client: the processed deltas with the settled changes joined.
        ///
        /// ```swift
        /// let answer = replayed.answer(try processor.process(replayed.deltas, store: store))
        /// ```
        public func answer(_ processed: [Delta]) -> [Delta] {
            var answer = processed
            for delta in settled {
                if let index = answer.firstIndex(where: { $0.tableName.equalsIgnoringCase(delta.tableName) }) {
                    answer[index].changes = (answer[index].changes + delta.changes).sorted { $0.changeId < $1.changeId }
                } else {
                    answer.append(delta)
                }
            }
            return answer
        }
    }

    /// Everything the replay keeps track of.
    private struct Work {
        struct Ref: Hashable {
            let delta: Int
            let change: Int
        }

        /// An edit to make: where it is, not the edit (its values are read where they are, when made).
        struct Step {
            let ref: Ref
            /// Where the change is in its delta (a lookup by id would make a large replay quadratic).
            let index: Int
            /// Where the change is among the request's changes (``Work/rows``).
            let ordinal: Int
            let edit: EditPlace
            let kind: RowEdit.Kind
            let sequence: Int64
            /// The request order, for edits without a sequence.
            let order: Int
        }

        /// Where a step's edit is: among its change's edits, or, for a change that carries none,
        /// among ``handMade``.
        enum EditPlace {
            case sent(Int)
            case handMade(Int)
        }

        var steps: [Step] = []
        /// The edits of changes that carry none (``editsOfHandMade(_:)``).
        var handMade: [RowEdit] = []
        /// Where each delta's first change is among the request's changes.
        let firstOrdinals: [Int]
        /// The rows the changes' edits are made on, once found or added, by the changes' ordinals.
        var rows: [DataTableRow?]
        var failed: [Ref: ChangeFailure] = [:]
        /// Changes the client's rules made (empty edits), for the server's rules to make again.
        var madeByRules: Set<Ref> = []
        /// The stored rows some change is about.
        var claimed: Set<ObjectIdentifier> = []
        /// Inserts the client's rules made that the user then edited: the server's rules must add the row.
        var addedByRules: Set<Ref> = []
        /// Rows the user's inserts added here.
        var addedByUser: Set<ObjectIdentifier> = []

        init(_ deltas: [Delta]) {
            var ordinals: [Int] = [], count = 0
            for delta in deltas {
                ordinals.append(count)
                count += delta.changes.count
            }
            firstOrdinals = ordinals
            rows = Array(repeating: nil, count: count)
            steps.reserveCapacity(count)
            claimed.reserveCapacity(count)
        }

        /// Where the change at `index` of the delta at `position` is among the request's changes.
        func ordinal(delta position: Int, change index: Int) -> Int { firstOrdinals[position] + index }

        // Most replays have no failure and no change made by rules: those answer without hashing.
        func failure(of ref: Ref) -> ChangeFailure? { failed.isEmpty ? nil : failed[ref] }
        func isMadeByRules(_ ref: Ref) -> Bool { !madeByRules.isEmpty && madeByRules.contains(ref) }

        /// Finds the stored row of each update and delete (compared with the change's original
        /// values now, before any edit runs), and lists the edits to make.
        mutating func collect(_ delta: Delta, at position: Int, in table: DataTable) {
            var checked = CheckedFields(of: delta, in: table)
            for index in delta.changes.indices {   // read in place: a loop over the changes would copy each
                let ref = Ref(delta: position, change: delta.changes[index].changeId)
                // The change's edits, read in place (a step holds where its edit is, not a copy of it).
                let sentEdits = delta.changes[index].edits, firstHandMade = handMade.count
                if sentEdits == nil { handMade.append(contentsOf: Self.editsOfHandMade(delta.changes[index])) }
                let editCount = sentEdits?.count ?? handMade.count - firstHandMade
                guard editCount > 0 else {
                    madeByRules.insert(ref)
                    continue
                }
                func place(_ edit: Int) -> (at: EditPlace, kind: RowEdit.Kind, sequence: Int64) {
                    if let sentEdits { return (.sent(edit), sentEdits[edit].kind, sentEdits[edit].sequence) }
                    let position = firstHandMade + edit
                    return (.handMade(position), handMade[position].kind, handMade[position].sequence)
                }
                let type = delta.changes[index].type
                if type == .insert, place(0).kind != .insert {
                    addedByRules.insert(ref)   // the rules added the row, then the user edited or removed it
                } else if type != .insert {
                    do {
                        let row = try findStoredRow(for: delta.changes[index].changeId, from: delta.changes[index].oldValues, checking: &checked, in: table)
                        guard claimed.insert(ObjectIdentifier(row)).inserted else {
                            throw RelataError(.invalidDelta, "change \(ref.change) is about \(row.label), which another change of the request changes too",
                                              table: table.name)
                        }
                        rows[ordinal(delta: position, change: index)] = row
                    } catch {
                        failed[ref] = EditReplay.failureOf(error)
                        continue
                    }
                }
                let changeOrdinal = ordinal(delta: position, change: index)
                for edit in 0..<editCount {
                    let (at, kind, sequence) = place(edit)
                    steps.append(Step(ref: ref, index: index, ordinal: changeOrdinal, edit: at, kind: kind, sequence: sequence, order: steps.count))
                }
            }
        }

        /// The values the step's edit sets.
        func values(of step: borrowing Step, in delta: Delta) -> FieldValues {
            switch step.edit {
            case .sent(let edit): delta.changes[step.index].edits?[edit].values ?? FieldValues()
            case .handMade(let position): handMade[position].values
            }
        }

        /// A change that carries no edits is one edit of its new values (those that differ from the originals).
        static func editsOfHandMade(_ change: DeltaChange) -> [RowEdit] {
            switch change.type {
            case .insert: return [RowEdit(sequence: 0, kind: .insert, values: change.newValues)]
            case .delete: return [RowEdit(sequence: 0, kind: .delete)]
            case .update: return [RowEdit(sequence: 0, kind: .update, values: change.newValues.filter { change.oldValues[$0.key] != $0.value })]
            }
        }
    }

    /// Makes one edit on the table.
    private func make(_ step: borrowing Work.Step, of delta: Delta, on table: DataTable, work: inout Work) throws {
        let editValues = work.values(of: step, in: delta)
        switch step.kind {
        case .insert:
            var values: [String: Value] = [:]
            var temporaryKeys: [(field: String, key: Int64)] = []
            for (name, value) in editValues {
                let field = try field(name, of: table)
                if field.autoIncrement { continue }
                if field.readOnly {
                    guard value.isNull else {
                        throw RelataError(.readOnlyField, "the field is read-only; a new row cannot set it", table: table.name, field: field.name)
                    }
                    continue
                }
                values[field.name] = value
            }
            for field in table.fields where field.autoIncrement {
                if let key = delta.changes[step.index].newValues[field.name]?.integerValue, key < 0 { temporaryKeys.append((field.name, key)) }
            }
            // Rows the rules add meanwhile take the keys that follow, as where the user made the edit.
            for (field, key) in temporaryKeys { table.prepareTemporaryKey(key, field: field) }
            let row = try table.addNewRow(values: values)
            work.rows[step.ordinal] = row
            work.addedByUser.insert(ObjectIdentifier(row))
            for (field, key) in temporaryKeys { try table.adoptTemporaryKey(key, field: field, for: row) }
            try requireValues(of: row)
        case .update:
            guard let row = try row(of: step, in: delta, on: table, work: &work) else { return }
            for (name, _) in editValues { _ = try field(name, of: table) }
            let values = step.sequence == 0 ? try editValues.filter { name, value in
                try coerce(value, to: field(name, of: table), table: table) != row[name]
            } : editValues
            if step.sequence == 0, values.isEmpty { return }   // a hand-made update that changes nothing
            try row.edit()
            do {
                if values.count == 1, let (name, value) = values.first {   // most edits set one value: no array sorted
                    try row.setValue(value, forKey: name)
                } else {
                    for (name, value) in values.sorted(by: { $0.key < $1.key }) { try row.setValue(value, forKey: name) }
                }
                try row.post()
            } catch {
                try? row.discard()
                throw error
            }
        case .delete:
            guard let row = try row(of: step, in: delta, on: table, work: &work) else { return }
            try table.removeRow(row)
        }
    }

    /// The row an update or delete edit is made on: found or added by an earlier edit, or the
    /// row the server's rules added for a row the client's rules added.
    private func row(of step: borrowing Work.Step, in delta: Delta, on table: DataTable, work: inout Work) throws -> DataTableRow? {
        if work.rows[step.ordinal] == nil, work.addedByRules.contains(step.ref) {
            work.rows[step.ordinal] = try rowAddedByRules(for: delta.changes[step.index], in: table, work: work)
        }
        return work.rows[step.ordinal]
    }

    /// The row the server's rules added that a client's change made by its rules stands for:
    /// the added row with the same key (the client's temporary key: temporary keys run in the
    /// same order on both sites), not one a user's insert added.
    private func rowAddedByRules(for change: DeltaChange, in table: DataTable, work: Work) throws -> DataTableRow {
        let key = table.primaryKeyFields.map { field in (try? field.coerced(change.newValues[field.name] ?? .null)) ?? .null }
        if let row = try table.row(forPrimaryKey: key), row.rowState == .added, !work.addedByUser.contains(ObjectIdentifier(row)) {
            return row
        }
        throw ConflictFailure(message: "the client's rules added the row this edit changes, and the server's did not")
    }

    /// The deltas the replay leaves, the incoming changes' ids on their rows.
    private func result(of deltas: [Delta], tables: [DataTable?], data: TableDataAccess, work: inout Work) -> Replayed {
        var results: [Delta] = []
        var settled: [Delta] = []
        for (position, delta) in deltas.enumerated() {
            guard let table = tables[position] else {
                results.append(failingEveryChange(of: delta, work: work, position: position))
                continue
            }
            // Changes are read in place by index here and below: a loop over them would copy each.
            for index in delta.changes.indices {
                let ref = Work.Ref(delta: position, change: delta.changes[index].changeId)
                guard !work.isMadeByRules(ref), work.failure(of: ref) == nil, let row = work.rows[work.ordinal(delta: position, change: index)], row.isInTable, row.changeId != 0 else { continue }
                do { try table.adoptChangeId(ref.change, for: row) } catch { work.failed[ref] = failure(describing: error) }
            }
            let answers = matchingChangesMadeByRules(of: delta, at: position, in: table, work: work)
            var made: Delta
            do {
                made = try table.makeDelta(sharingValuesWith: delta)
            } catch {
                // A rule left a row it made without a required value: nothing can be processed.
                results.append(failingEveryChange(of: delta, work: work, position: position, because: failure(describing: error)))
                continue
            }
            made.keyFields = table.primaryKeyFields.map(\.name)
            made.loggedFields = delta.loggedFields.isEmpty ? made.loggedFields : delta.loggedFields
            if answers.isEmpty, work.failed.isEmpty, Self.sameChangeIds(made, delta) {
                results.append(made)   // the common case: each change made as sent, nothing else; what follows would give the same
                continue
            }
            // Where each change id is in what the table made (a change is copied once, into place).
            var madePosition: [Int: Int] = [:]
            madePosition.reserveCapacity(made.changes.count)
            for index in made.changes.indices where madePosition[made.changes[index].changeId] == nil { madePosition[made.changes[index].changeId] = index }
            var answersAnIncomingId = [Bool](repeating: false, count: made.changes.count)
            var changes: [DeltaChange] = []
            changes.reserveCapacity(made.changes.count)
            var done = Delta(tableName: delta.tableName, keyFields: made.keyFields, loggedFields: made.loggedFields, changes: [])
            for incomingIndex in delta.changes.indices {
                let ref = Work.Ref(delta: position, change: delta.changes[incomingIndex].changeId)
                let madeIndex = madePosition[ref.change]
                if let madeIndex { answersAnIncomingId[madeIndex] = true }
                if let failure = work.failure(of: ref) {
                    var change = delta.changes[incomingIndex]
                    change.status = .pending
                    change.fail(failure)
                    changes.append(change)
                } else if let madeIndex {
                    changes.append(made.changes[madeIndex])
                } else if let answer = answers[ref.change] {
                    done.changes.append(answer)
                } else {
                    let incoming = delta.changes[incomingIndex]
                    var change = incoming   // its edits left the row as stored, or a new row gone again
                    if incoming.type == .update, let stored = storedRow(of: incoming, in: table) {
                        // The client expects what it sent; it gets what is stored (the rest of its sent values never were edits).
                        let differing = table.fields.filter { incoming.newValues[$0.name] != stored[$0.name] }
                        change.resolve(refreshing: FieldValues(uniqueKeysWithValues: differing.map { ($0.name, stored[$0.name]) }))
                    } else {
                        change.resolve()
                    }
                    done.changes.append(change)
                }
            }
            // Then the changes the server's rules made to other rows.
            for index in made.changes.indices where !answersAnIncomingId[index] { changes.append(made.changes[index]) }
            made.changes = changes
            results.append(made)
            if !done.changes.isEmpty { settled.append(done) }
        }
        // Tables no incoming delta names, changed by the rules.
        for table in data.tables where !tables.contains(where: { $0 === table }) && table.hasChanges {
            if let made = try? table.makeDelta(), !made.changes.isEmpty { results.append(made) }
        }
        return Replayed(deltas: results, settled: settled)
    }

    /// Whether two deltas hold changes of the same ids in the same order.
    private static func sameChangeIds(_ one: Delta, _ other: Delta) -> Bool {
        one.changes.count == other.changes.count && one.changes.indices.allSatisfy { one.changes[$0].changeId == other.changes[$0].changeId }
    }

    /// Gives the changes the server's rules made the ids of the client's changes its rules made:
    /// the same row (table and original key) for updates and deletes, the same rank among the
    /// rows the rules added for inserts.
    /// - Returns: answers for the client's changes the server's rules did not make.
    private func matchingChangesMadeByRules(of delta: Delta, at position: Int, in table: DataTable, work: Work) -> [Int: DeltaChange] {
        guard !work.madeByRules.isEmpty else { return [:] }
        let wanted = delta.changes.filter { work.isMadeByRules(Work.Ref(delta: position, change: $0.changeId)) }
        guard !wanted.isEmpty else { return [:] }
        let incomingIds = Set(delta.changes.map(\.changeId))
        let keyFields = table.primaryKeyFields
        var unclaimed = table.changedRowsByChangeId().filter { !incomingIds.contains($0.key) }.sorted { $0.key < $1.key }.map(\.value)
        var answers: [Int: DeltaChange] = [:]
        for change in wanted {
            let type = change.type
            let state: RowState = type == .insert ? .added : type == .delete ? .deleted : .modified
            let values = type == .insert ? change.newValues : change.oldValues
            func sameKey(_ row: DataTableRow) -> Bool {
                keyFields.allSatisfy { field in
                    let value = (try? field.coerced(values[field.name] ?? .null)) ?? .null
                    return value == (type == .insert ? row[field.name] : row.originalValue(forKey: field.name))
                }
            }
            // An added row by its (temporary) key, else the first the rules added that no change claimed.
            let index = unclaimed.firstIndex { $0.rowState == state && sameKey($0) }
                ?? (type == .insert ? unclaimed.firstIndex { $0.rowState == state && !work.addedByUser.contains(ObjectIdentifier($0)) } : nil)
            if let index, (try? table.adoptChangeId(change.changeId, for: unclaimed[index])) != nil {
                unclaimed.remove(at: index)
                continue
            }
            var answer = change
            answer.status = .pending
            if type == .update, let stored = storedRow(of: change, in: table) {
                answer.resolve(refreshing: FieldValues(uniqueKeysWithValues: table.fields.map { ($0.name, stored[$0.name]) }))
                answer.message = "the client's rules changed the row and the server's did not: it holds the stored values"
            } else {
                answer.fail(ChangeFailure(.conflict, "the client's rules \(type == .insert ? "added" : "deleted") the row and the server's did not"))
            }
            answers[change.changeId] = answer
        }
        return answers
    }

    private func storedRow(of change: DeltaChange, in table: DataTable) -> DataTableRow? {
        let key = table.primaryKeyFields.map { field in (try? field.coerced(change.oldValues[field.name] ?? .null)) ?? .null }
        guard let row = try? table.row(forPrimaryKey: key), row.rowState == .unchanged else { return nil }
        return row
    }

    private func failingEveryChange(of delta: Delta, work: Work, position: Int, because reason: ChangeFailure? = nil) -> Delta {
        var result = delta
        for index in result.changes.indices {
            let failure = reason ?? work.failed[Work.Ref(delta: position, change: result.changes[index].changeId)]
                ?? ChangeFailure(.invalidValue, "the delta could not be replayed")
            result.changes[index].status = .pending
            result.changes[index].fail(failure)
        }
        return result
    }

    /// A new row must have every required value once its rules ran (auto-increment fields get theirs from the store).
    private func requireValues(of row: DataTableRow) throws {
        for field in row.table.fields where field.required && !field.autoIncrement && row[field.name].isNull {
            throw RelataError(.requiredValueMissing, "the field is required", table: row.table.name, field: field.name)
        }
    }

    private func field(_ name: String, of table: DataTable) throws -> FieldDefinition {
        guard let field = table.field(named: name) else {
            throw RelataError(.unknownField, "the table has no field '\(name)'", table: table.name, field: name)
        }
        return field
    }

    private func coerce(_ value: Value, to field: FieldDefinition, table: DataTable) throws -> Value {
        do {
            return try field.coerced(value)
        } catch var error as RelataError {
            error.table = table.name
            throw error
        }
    }

    private func failure(describing error: any Error) -> ChangeFailure { Self.failureOf(error) }

    fileprivate static func failureOf(_ error: any Error) -> ChangeFailure {
        if let conflict = error as? ConflictFailure { return ChangeFailure(.conflict, conflict.message) }
        return ChangeFailure(describing: error)
    }
}

/// The fields a delta's updates and deletes are checked by, found once per delta: the
/// table's key, and the logged fields the table has (by the name the delta uses).
private struct CheckedFields {
    let keys: [FieldDefinition]
    /// Each logged field by the name the delta uses, with its index in the table's fields.
    let logged: [(name: String, index: Int)]
    /// The original values of a change: the keys' first (by the table's names), then the logged
    /// fields' (by the delta's) at ``loggedPositions``.
    var originals: FieldValueReader
    let loggedPositions: [Int]

    init(of delta: Delta, in table: DataTable) {
        keys = table.primaryKeyFields
        logged = delta.loggedFields.compactMap { name in table.fieldIndex(named: name).map { (name, $0) } }
        var names = keys.map(\.name)
        loggedPositions = logged.map { field in
            if let known = names.firstIndex(of: field.name) { return known }
            names.append(field.name)
            return names.count - 1
        }
        originals = FieldValueReader(names: names)
    }
}

/// The stored row an update or delete is about, checked against the values the change started from.
private func findStoredRow(for changeId: Int, from oldValues: FieldValues, checking checked: inout CheckedFields, in table: DataTable) throws -> DataTableRow {
    let keyFields = checked.keys
    guard !keyFields.isEmpty else {
        throw RelataError(.invalidDelta, "the table has no primary key, so its rows cannot be found", table: table.name)
    }
    checked.originals.load(oldValues)
    let originals = checked.originals
    let key = try keyFields.indices.map { position in
        let field = keyFields[position]
        guard let value = originals[position] else {
            throw RelataError(.invalidDelta, "change \(changeId) lacks the key field's original value", table: table.name, field: field.name)
        }
        do { return try field.coerced(value) } catch var error as RelataError {
            error.table = table.name
            throw error
        }
    }
    guard let row = table.row(forCoercedPrimaryKey: key) else {
        throw ConflictFailure(message: "the row (\(zip(keyFields, key).map { "\($0.name)=\($1.text)" }.joined(separator: ", "))) is no longer there")
    }
    var changed: [String] = []
    for (field, (_, index)) in checked.logged.enumerated() {
        guard let original = originals[checked.loggedPositions[field]] else { continue }
        let stored = row.originalValue(at: index)
        // Coerced only when it differs as sent (an integer for a Float field, a date as text).
        if original != stored, (try? table.fields[index].coerced(original)) != stored { changed.append(table.fields[index].name) }
    }
    if !changed.isEmpty {
        throw ConflictFailure(message: "\(row.label) changed since it was read: \(changed.joined(separator: ", "))")
    }
    return row
}

/// A change refused because its row is not as it was read.
private struct ConflictFailure: Error {
    let message: String
}

/// Foreign keys, checked as a database checks them when a transaction commits: after
/// the commit, every row that refers to a parent row must find it.
extension DataTable {
    /// The changes of `delta` that would break a declared foreign key (see
    /// ``addForeignKey(_:references:field:)``) if the changes in `committing` — change
    /// ids by table — were committed together: a new or changed row whose parent row
    /// would not exist, or a deleted row that rows of another table would still refer to.
    ///
    /// ```swift
    /// let committing = [ObjectIdentifier(orders): Set(ordersDelta.changes.map(\.changeId))]
    /// for (changeId, message) in orders.foreignKeyViolations(in: ordersDelta, committing: committing) {
    ///     print(changeId, message)   // "Orders.ClientId = 99 refers to no row of Clients (ClientId)"
    /// }
    /// ```
    /// - Returns: a message by change id, naming both tables and the key.
    public func foreignKeyViolations(in delta: Delta, committing: [ObjectIdentifier: Set<Int>]) -> [Int: String] {
        let constraining = constrainingReferences
        // A table no foreign key touches has nothing to check (most tables of a large apply).
        guard !parentReferences.isEmpty || !constraining.isEmpty else { return [:] }
        let mine = committing[ObjectIdentifier(self)] ?? []
        let slots = Dictionary(changes.map { ($0.value.changeId, $0.key) }, uniquingKeysWith: { first, _ in first })
        var originals = OriginalHolders()
        var violations: [Int: String] = [:]
        for change in delta.changes where change.status != .failed && mine.contains(change.changeId) {
            guard let slot = slots[change.changeId] else { continue }
            switch change.type {
            case .insert, .update:
                for parent in parentReferences {
                    // An update breaks only a reference it changes: one it keeps is the data source's, checked when it was made.
                    guard let parentTable = parent.table, change.type == .insert || changes(parent.field, in: change, slot: slot) else { continue }
                    let value = postedValue(slot: slot, field: parent.field)
                    guard !value.isNull, parentTable.slotThatWillHold(value, in: parent.keyField, committing: committing[ObjectIdentifier(parentTable)] ?? [],
                                                                      originals: originals.of(parentTable, parent.keyField)) == nil else { continue }
                    violations[change.changeId] = "\(name).\(fields[parent.field].name) = \(value.text) refers to no row of "
                        + "\(parentTable.name) (\(parentTable.fields[parent.keyField].name))"
                }
                // A key that rows of another table refer to cannot change under them.
                for reference in constraining where change.type == .update && changes(reference.keyField, in: change, slot: slot) {
                    guard let child = reference.table, let key = originalValue(slot: slot, field: reference.keyField), !key.isNull,
                          let holder = child.slotThatWillHold(key, in: reference.field, committing: committing[ObjectIdentifier(child)] ?? [],
                                                              originals: originals.of(child, reference.field)) else { continue }
                    violations[change.changeId] = "\(name) \(rowLabel(slot: slot)) cannot change \(fields[reference.keyField].name) from \(key.text): "
                        + "\(child.name) \(child.rowLabel(slot: holder)) still refers to it (\(child.name).\(child.fields[reference.field].name))"
                }
            case .delete:
                for reference in constraining {
                    guard let child = reference.table else { continue }
                    let key = originalValue(slot: slot, field: reference.keyField) ?? postedValue(slot: slot, field: reference.keyField)
                    guard !key.isNull, let holder = child.slotThatWillHold(key, in: reference.field, committing: committing[ObjectIdentifier(child)] ?? [],
                                                                             originals: originals.of(child, reference.field)) else { continue }
                    violations[change.changeId] = "\(name) \(rowLabel(slot: slot)) cannot be deleted: \(child.name) \(child.rowLabel(slot: holder)) "
                        + "still refers to it (\(child.name).\(child.fields[reference.field].name))"
                }
            }
        }
        return violations
    }

    /// Whether an update changes a field: its posted value differs from its original.
    private func changes(_ field: Int, in change: DeltaChange, slot: Int) -> Bool {
        guard let original = originalValue(slot: slot, field: field) else { return true }
        return original != postedValue(slot: slot, field: field)
    }

    /// The changed rows (modified or deleted) by the value their `field` holds in the data source:
    /// rows that hold a value until their change is committed. Made once per table and field for
    /// a whole check, so each lookup is a hash, not a scan of the changed rows.
    struct OriginalHolders {
        private var made: [ObjectIdentifier: [Int: [Value: [Int]]]] = [:]

        mutating func of(_ table: DataTable, _ field: Int) -> [Value: [Int]] {
            if let known = made[ObjectIdentifier(table)]?[field] { return known }
            var holders: [Value: [Int]] = [:]
            for (slot, record) in table.changes where record.state == .modified || record.state == .deleted {
                guard let original = table.originalValue(slot: slot, field: field) else { continue }
                holders[original, default: []].append(slot)
            }
            made[ObjectIdentifier(table), default: [:]][field] = holders
            return holders
        }
    }

    /// A row that will hold `value` in `field` after the commit: its committed value if its change
    /// is committed, else its original value (a row added and not committed will not exist).
    /// `originals` is ``OriginalHolders/of(_:_:)`` for this table and field.
    ///
    /// Of several such rows, the one with the lowest primary key: every site names the same row,
    /// however its table came to hold them (all rows offline, those a server loaded).
    func slotThatWillHold(_ value: Value, in field: Int, committing: Set<Int>, originals: [Value: [Int]]) -> Int? {
        var holders: [Int] = []
        for slot in (try? index(forField: fields[field].name))?.slots(for: value) ?? [] {
            guard let record = changes[slot] else {
                holders.append(slot)
                continue
            }
            if committing.contains(record.changeId) || (record.state == .modified && originalValue(slot: slot, field: field) == value) {
                holders.append(slot)
            }
        }
        // Rows whose value in the data source is `value` and whose change is not committed.
        for slot in originals[value] ?? [] {
            guard let record = changes[slot], !committing.contains(record.changeId) else { continue }
            holders.append(slot)
        }
        return holders.min { keyPrecedes(slot: $0, slot: $1) }
    }

    /// Whether one slot's primary key (as it is now) orders before another's.
    private func keyPrecedes(slot left: Int, slot right: Int) -> Bool {
        for field in keyFieldIndexes {
            let order = (try? Value.compare(postedValue(slot: left, field: field), postedValue(slot: right, field: field))) ?? nil
            if let order, order != .orderedSame { return order == .orderedAscending }
        }
        return left < right
    }
}

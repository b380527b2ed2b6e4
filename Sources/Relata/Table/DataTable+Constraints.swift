/// The constraints a database enforces, enforced in memory as rows are written, so
/// that offline verdicts match what a data server says later: primary keys are
/// unique and never NULL. (Foreign keys are checked when changes are applied.)
extension DataTable {
    /// Checks the primary key a slot would have with `changes` over its posted values:
    /// every key field set, and no other visible row holding the same key.
    ///
    /// - Throws: ``RelataError/Code/constraintViolation`` naming the table, the key and the row that holds it.
    func checkPrimaryKey(slot: Int?, changing changes: [Int: Value]) throws {
        try checkPrimaryKey(slot: slot) { changes[$0] }
    }

    /// ``checkPrimaryKey(slot:changing:)`` with the changed values read through `changed` (nil: not
    /// changed), so an edit's few values need not be made into a dictionary first.
    func checkPrimaryKey(slot: Int?, changed: (Int) -> Value?) throws {
        guard !keyFieldIndexes.isEmpty else { return }
        if slot != nil, !keyFieldIndexes.contains(where: { changed($0) != nil }) { return }
        let key = keyFieldIndexes.map { field in changed(field) ?? slot.map { postedValue(slot: $0, field: field) } ?? .null }
        if let missing = zip(keyFieldIndexes, key).first(where: { $1.isNull })?.0 {
            throw error(.constraintViolation, "the field is part of the primary key and cannot be NULL", field: missing, slot: slot)
        }
        if let holder = self.slot(holdingKey: key, except: slot) {
            throw error(.constraintViolation, "the primary key (\(keyText(key))) is already used by \(rowLabel(slot: holder))", slot: slot)
        }
    }

    /// Before a changed or deleted row gets its original key back (its change cancelled):
    /// no other row may have taken that key meanwhile.
    func checkOriginalKeyIsFree(slot: Int) throws {
        guard !keyFieldIndexes.isEmpty, let state = changes[slot]?.state, state == .modified || state == .deleted else { return }
        let original = keyFieldIndexes.map { originalValue(slot: slot, field: $0) ?? .null }
        if let holder = self.slot(holdingKey: original, except: slot) {
            throw error(.constraintViolation, "the change cannot be cancelled: the row's original key (\(keyText(original))) is now used by \(rowLabel(slot: holder))",
                        slot: slot)
        }
    }

    /// The visible slot (other than `except`) whose primary key is `key`, through the key's index.
    func slot(holdingKey key: [Value], except: Int?) -> Int? {
        guard let first = keyFieldIndexes.first, let index = try? index(forField: fields[first].name) else { return nil }
        return index.slots(for: key[0]).first { candidate in
            candidate != except && zip(keyFieldIndexes, key).allSatisfy { postedValue(slot: candidate, field: $0) == $1 }
        }
    }

    /// `OrderId=10, Line=2`.
    func keyText(_ key: [Value]) -> String {
        zip(keyFieldIndexes, key).map { "\(fields[$0].name)=\($1.text)" }.joined(separator: ", ")
    }

    /// True when a declared foreign key involves this table, as the child or as the parent:
    /// only then can its changes break one (``foreignKeyViolations(in:committing:)``).
    ///
    /// ```swift
    /// try details.addForeignKey("OrderId", references: orders, field: "OrderId")
    /// orders.hasForeignKeys   // true
    /// ```
    public var hasForeignKeys: Bool { !parentReferences.isEmpty || !constrainingReferences.isEmpty }

    /// The fields of other tables that must refer to existing rows of this one (declared
    /// with ``addForeignKey(_:references:field:)``; lookups alone do not constrain).
    var constrainingReferences: [TableReference] {
        references.filter { $0.isConstraint && $0.table != nil }
    }
}

/// Primary keys seen while rows load, or held by a table (``DataTable/heldKeys``): integers
/// (the usual key) in a set of their own, so a key of one integer is neither an array nor hashed.
package struct KeySet {
    private var integers = IntegerKeySet()
    private var others: Set<[Value]> = []

    /// Adds a key; false when it was there already or is not a whole key (a part is NULL).
    package mutating func insert(_ key: [Value]) -> Bool {
        if key.contains(where: \.isNull) { return false }
        if key.count == 1, case .integer(let value) = key[0] { return integers.insert(value) }
        return others.insert(key).inserted
    }

    /// Adds a key of one integer field.
    mutating func insert(integer: Int64) -> Bool { integers.insert(integer) }

    /// True when the set holds the key (never for a key with a NULL part).
    package func contains(_ key: [Value]) -> Bool {
        if key.count == 1, case .integer(let value) = key[0] { return integers.contains(value) }
        return others.contains(key)
    }

    mutating func reserveCapacity(integers more: Int) { integers.reserveCapacity(more) }
}

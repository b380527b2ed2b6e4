/// A field whose value is a function of the row, never stored and never in a delta.
struct CalculatedField {
    let name: String
    let type: DataType
    let cached: Bool
    let compute: (DataTableRow) throws -> Value
    /// Computes many rows in one go (a script engine loops inside JavaScript); optional.
    let computeMany: ((RowSet) throws -> [Value])?
    /// Cached values by slot (only when `cached`).
    var cache: [Int: Value] = [:]
    /// Stored fields the function read, over every computation so far.
    var dependencies: Set<Int> = []
    /// The function read a calculated or lookup field, so other tables' changes can matter.
    var readsVirtualFields = false
}

/// A field whose value comes from another table: `sourceField → lookupTable.lookupKeyField → lookupResultField`.
struct LookupField {
    let name: String
    let sourceField: Int
    let lookupTable: DataTable
    let keyIndex: DataTableIndex
    let resultField: Int
}

/// Collects the fields a calculated field reads while it computes.
final class ReadRecorder {
    var fields: Set<Int> = []
    var virtual = false
}

/// A field (of this or another table) that holds key values of a table; used to
/// replace temporary keys when the data source assigns real ones.
struct TableReference {
    /// Not weak: a weak reference would send every retain and release of the table down the slow path.
    private let back: BackReference<DataTable>
    var table: DataTable? { back.object }
    let field: Int
    let keyField: Int
    /// A declared foreign key (checked when changes are applied), not only a lookup's link.
    var isConstraint: Bool

    init(table: DataTable, field: Int, keyField: Int, isConstraint: Bool) {
        back = table.back
        self.field = field
        self.keyField = keyField
        self.isConstraint = isConstraint
    }
}

extension DataTable {
    /// Adds a calculated field: a function of the row, evaluated when read.
    ///
    /// With `cached: true` the value is kept in memory and recomputed only when
    /// a field the function read changes (or, when it reads lookup fields, when
    /// the looked-up table changes). The result is converted to `type`.
    ///
    /// ```swift
    /// try orderDetails.addCalculatedField(name: "Total", type: .float, cached: true) { row in
    ///     .double((row.Quantity.doubleValue ?? 0) * (row.Price.doubleValue ?? 0))
    /// }
    /// ```
    /// - Throws: ``RelataError/Code/invalidDefinition`` when the name is already used.
    ///
    /// `computeMany`, when given, computes the values of many rows at once; the
    /// table uses it to sort, filter and read whole columns
    /// (``values(ofField:rows:)``) without one call per row. It must return one
    /// value per row, in order, equal to what `compute` gives.
    public func addCalculatedField(name: String, type: DataType, cached: Bool = false,
                                   compute: @escaping (DataTableRow) throws -> Value,
                                   computeMany: ((RowSet) throws -> [Value])? = nil) throws {
        try checkNewFieldName(name)
        calculatedFields.append(CalculatedField(name: name, type: type, cached: cached, compute: compute, computeMany: computeMany))
    }

    /// The values of one field for many rows (all visible rows by default), in order.
    /// Calculated fields with a `computeMany` function are computed in one batch.
    ///
    /// ```swift
    /// let totals = try orderDetails.values(ofField: "Total")
    /// ```
    public func values(ofField name: String, rows: [DataTableRow]? = nil) throws -> [Value] {
        let slots = try rows.map { try $0.map { try slot(of: $0) } } ?? visibleSlots
        return try values(ofField: name, slots: slots)
    }

    /// The values of one field for the rows of a row set, in order.
    public func values(ofField name: String, in rows: RowSet) throws -> [Value] {
        rows.checkValid()
        return try values(ofField: name, slots: rows.slots)
    }

    func values(ofField name: String, slots: [Int]) throws -> [Value] {
        if let field = fieldIndex(named: name) { return slots.map { currentValue(slot: $0, field: field) } }
        if let index = calculatedFields.firstIndex(where: { $0.name.equalsIgnoringCase(name) }),
           let computeMany = calculatedFields[index].computeMany {
            let field = calculatedFields[index]
            var values: [Value]
            do {
                values = try computeMany(RowSet(table: self, slots: slots))
            } catch let error as RelataError {
                throw error
            } catch {
                throw RelataError(.calculationFailed, "calculated field failed: \(error)", table: self.name, field: field.name)
            }
            guard values.count == slots.count else {
                throw RelataError(.calculationFailed, "computed \(values.count) values for \(slots.count) rows", table: self.name, field: field.name)
            }
            // In place: a million values are coerced without a second array, and those already
            // in the field's storage are left where they are.
            try values.withUnsafeMutableBufferPointer { values in
                for index in values.indices where !field.type.keepsAsIs(values[index]) {
                    do throws(CoercionFailure) {
                        values[index] = try field.type.coerced(values[index])
                    } catch {
                        throw RelataError(.calculationFailed, "calculated field failed: \(error.message)", table: self.name,
                                          field: field.name, row: rowLabel(slot: slots[index]))
                    }
                }
            }
            return values
        }
        return try slots.map { try virtualValue(named: name, slot: $0) }
    }

    /// Adds a lookup field: for each row, the value of `lookupResultField` in the
    /// row of `lookupTable` whose `lookupKeyField` equals this row's `sourceField`
    /// (NULL when there is none). Served by a hash index kept current as either table changes.
    ///
    /// ```swift
    /// try orderDetails.addLookupField(name: "ProductName", sourceField: "ProductId",
    ///                                 lookupTable: products, lookupKeyField: "ProductId",
    ///                                 lookupResultField: "ProductName")
    /// ```
    /// The link also tells `lookupTable` that `sourceField` holds its keys, so a
    /// temporary key replaced on ``accept(_:)`` is replaced here too.
    ///
    /// - Throws: ``RelataError/Code/unknownField`` naming the table and field that do not exist.
    public func addLookupField(name: String, sourceField: String, lookupTable: DataTable,
                               lookupKeyField: String, lookupResultField: String) throws {
        try checkNewFieldName(name)
        let source = try requireFieldIndex(sourceField)
        let index = try lookupTable.index(forField: lookupKeyField)
        let result = try lookupTable.requireFieldIndex(lookupResultField)
        lookupFields.append(LookupField(name: name, sourceField: source, lookupTable: lookupTable,
                                        keyIndex: index, resultField: result))
        try addReference(sourceField, to: lookupTable, field: lookupKeyField, isConstraint: false)
        if lookupTable !== self {
            let back = self.back   // not weak: see BackReference
            lookupObservations.append(lookupTable.observe { event in
                if event == .tableChanged { back.object?.lookupTableDidChange() }
            })
        }
    }

    /// Declares that `field` of this table holds values of `table`'s `keyField`,
    /// so that when ``accept(_:)`` on `table` replaces a temporary key by the
    /// real one, rows here that use it are updated.
    ///
    /// ```swift
    /// try orderDetails.addForeignKey("OrderId", references: orders, field: "OrderId")
    /// ```
    ///
    /// A foreign key is also a constraint: a LocalDataAdapter's apply fails a change
    /// that would leave a row here referring to a missing row of `table`, or delete a
    /// row of `table` that rows here still refer to.
    public func addForeignKey(_ field: String, references table: DataTable, field keyField: String) throws {
        try addReference(field, to: table, field: keyField, isConstraint: true)
    }

    private func addReference(_ field: String, to table: DataTable, field keyField: String, isConstraint: Bool) throws {
        let source = try requireFieldIndex(field)
        let key = try table.requireFieldIndex(keyField)
        if let existing = table.references.firstIndex(where: { $0.table === self && $0.field == source && $0.keyField == key }) {
            table.references[existing].isConstraint = table.references[existing].isConstraint || isConstraint
        } else {
            table.references.append(TableReference(table: self, field: source, keyField: key, isConstraint: isConstraint))
        }
        if isConstraint, !parentReferences.contains(where: { $0.table === table && $0.field == source && $0.keyField == key }) {
            parentReferences.append(TableReference(table: table, field: source, keyField: key, isConstraint: true))
        }
    }

    /// Throws away every cached calculated value.
    public func clearCalculatedCaches() {
        for index in calculatedFields.indices { calculatedFields[index].cache.removeAll() }
    }

    /// The names of the calculated and lookup fields.
    public var virtualFieldNames: [String] { calculatedFields.map(\.name) + lookupFields.map(\.name) }

    func isVirtualField(named name: String) -> Bool {
        calculatedFields.contains { $0.name.equalsIgnoringCase(name) }
            || lookupFields.contains { $0.name.equalsIgnoringCase(name) }
    }

    private func checkNewFieldName(_ name: String) throws {
        if fieldIndex(named: name) != nil || isVirtualField(named: name) {
            throw RelataError(.invalidDefinition, "the field name is already used", table: self.name, field: name)
        }
    }

    func virtualValue(named name: String, slot: Int) throws -> Value {
        if let index = calculatedFields.firstIndex(where: { $0.name.equalsIgnoringCase(name) }) {
            readRecorder?.virtual = true
            return try calculatedValue(index, slot: slot)
        }
        if let lookup = lookupFields.first(where: { $0.name.equalsIgnoringCase(name) }) {
            readRecorder?.virtual = true
            return lookupValue(lookup, slot: slot)
        }
        throw unknownField(name)
    }

    func lookupValue(_ lookup: LookupField, slot: Int) -> Value {
        let key = currentValue(slot: slot, field: lookup.sourceField)
        guard let target = lookup.keyIndex.slots(for: key).first else { return .null }
        return lookup.lookupTable.postedValue(slot: target, field: lookup.resultField)
    }

    private func calculatedValue(_ index: Int, slot: Int) throws -> Value {
        let field = calculatedFields[index]
        let cacheable = field.cached && changes[slot]?.edit == nil
        if cacheable, let cached = field.cache[slot] { return cached }
        let outer = readRecorder
        let recorder = ReadRecorder()
        readRecorder = recorder
        defer {
            readRecorder = outer
            outer?.fields.formUnion(recorder.fields)
        }
        let value: Value
        do {
            value = try field.type.coerce(try field.compute(row(atSlot: slot)))
        } catch {
            throw RelataError(.calculationFailed, "calculated field failed: \(error)", table: name, field: field.name,
                              row: rowLabel(slot: slot))
        }
        calculatedFields[index].dependencies.formUnion(recorder.fields)
        if recorder.virtual { calculatedFields[index].readsVirtualFields = true }
        if cacheable { calculatedFields[index].cache[slot] = value }
        return value
    }

    /// Drops cached values of one row that depend on `field`.
    func invalidateCalculatedValues(slot: Int, field: Int) {
        for index in calculatedFields.indices where calculatedFields[index].cached {
            if calculatedFields[index].dependencies.contains(field) || calculatedFields[index].readsVirtualFields {
                calculatedFields[index].cache[slot] = nil
            }
        }
    }

    private func lookupTableDidChange() {
        for index in calculatedFields.indices where calculatedFields[index].readsVirtualFields {
            calculatedFields[index].cache.removeAll()
        }
    }
}

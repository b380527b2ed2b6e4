import Foundation

/// Numeric columns as plain doubles, for engines that loop over many rows at once
/// (RelataScript hands them to JavaScript as shared `Float64Array`s).
extension DataTable {
    /// Writes a field's values for the given rows into `buffer`, one double per
    /// row: integers, floats and decimals as numbers, booleans as 0 or 1, dates
    /// as seconds since 1970, NULL as NaN. Reads posted values (or the
    /// originals), straight from the column store for unchanged rows.
    ///
    /// ```swift
    /// let changed = table.rowSet(in: .modified)
    /// let quantities = UnsafeMutableBufferPointer<Double>.allocate(capacity: changed.count)
    /// try table.copyNumbers(ofField: "Quantity", in: changed, into: quantities)
    /// ```
    /// - Throws: ``RelataError/Code/unknownField``, or ``RelataError/Code/typeMismatch``
    ///   for a field whose type is not numeric, boolean or date.
    public func copyNumbers(ofField name: String, in rows: RowSet, originals: Bool = false,
                            into buffer: UnsafeMutableBufferPointer<Double>) throws {
        try copyNumbers(ofFields: [name], in: rows, originals: originals, into: [buffer])
    }

    /// Writes several fields at once (one buffer per field, in order): one pass
    /// over the changed rows serves them all.
    public func copyNumbers(ofFields names: [String], in rows: RowSet, originals: Bool = false,
                            into buffers: [UnsafeMutableBufferPointer<Double>]) throws {
        precondition(rows.table === self, "the row set belongs to table \(rows.table.name)")
        precondition(names.count == buffers.count, "\(names.count) fields, \(buffers.count) buffers")
        precondition(buffers.allSatisfy { $0.count >= rows.count }, "a buffer is smaller than the row set (\(rows.count) rows)")
        rows.checkValid()
        let fields = try names.map { name -> Int in
            let field = try requireFieldIndex(name)
            if case .string = columns[field] { throw notNumeric(name) }
            if case .guid = columns[field] { throw notNumeric(name) }
            if case .blob = columns[field] { throw notNumeric(name) }
            return field
        }
        let slots = rows.slots
        for (field, buffer) in zip(fields, buffers) { copyColumn(field, slots: slots, into: buffer) }
        // Rows with changes: added rows have no originals; pending values replace the originals.
        for (field, buffer) in zip(fields, buffers) {
            changes.overlayNumbers(field: field, slots: slots, originals: originals, into: buffer)
        }
    }

    /// The original values of a stored numeric column for the given slots.
    private func copyColumn(_ field: Int, slots: [Int], into buffer: UnsafeMutableBufferPointer<Double>) {
        func fill<E>(_ column: TypedColumn<E>, _ convert: (E) -> Double) {
            let elements = column.elements, nulls = column.nullWords
            for (index, slot) in slots.enumerated() {
                buffer[index] = nulls[slot &>> 6] & (1 &<< UInt64(slot & 63)) != 0 ? .nan : convert(elements[slot])
            }
        }
        switch columns[field] {
        case .integer(let column): fill(column) { Double($0) }
        case .double(let column): fill(column) { $0 }
        case .decimal(let column): fill(column) { Value.decimal($0).doubleValue ?? .nan }
        case .boolean(let column): fill(column) { $0 ? 1 : 0 }
        case .date(let column): fill(column) { $0.timeIntervalSince1970 }
        case .string, .guid, .blob: break
        }
    }

    private func notNumeric(_ name: String) -> RelataError {
        RelataError(.typeMismatch, "the field is not numeric, boolean or a date", table: self.name, field: name)
    }
}

extension Value {
    /// The value as batch work sees numbers: booleans 0 or 1, dates in seconds since 1970, NULL NaN.
    var batchNumber: Double {
        switch self {
        case .boolean(let bool): return bool ? 1 : 0
        case .date(let date): return date.timeIntervalSince1970
        default: return doubleValue ?? .nan
        }
    }
}

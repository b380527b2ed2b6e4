import Foundation

/// Numeric columns as plain doubles, for engines that loop over many rows at once
/// (RelataScript hands them to JavaScript as shared `Float64Array`s).
extension DataTable {
    /// Writes a field's values for the given rows into `buffer`, one double per
    /// row: integers, floats and decimals as numbers, booleans as 0 or 1, dates
    /// as JavaScript counts them (whole milliseconds since 1970, rounded down), NULL as NaN. Reads posted values (or the
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
        for (field, buffer) in zip(fields, buffers) { copyColumn(field, slots: rows.slots, originals: originals, into: buffer) }
    }

    /// One field's values for the given slots: the pending value of a changed row (unless
    /// `originals`), NaN for an added row without one, else the column store's original.
    private func copyColumn(_ field: Int, slots: [Int], originals: Bool, into buffer: UnsafeMutableBufferPointer<Double>) {
        if !originals { changes.prepareNumberMirror(field: field) }
        func fill<E>(_ column: TypedColumn<E>, _ convert: (E) -> Double) {
            let out = buffer.baseAddress!
            column.elements.withUnsafeBufferPointer { elements in
                column.nullWords.withUnsafeBufferPointer { nulls in
                    slots.withUnsafeBufferPointer { slots in
                        changes.withNumbers(field: originals ? nil : field) { index, states, pending in
                            for position in 0..<slots.count {
                                let slot = slots[position]
                                let record = Int(index[slot])
                                if record != 0 {
                                    if !originals, pending[record - 1] != ChangeStore.noPendingValue {
                                        out[position] = Double(bitPattern: pending[record - 1])
                                        continue
                                    }
                                    let state = states[record - 1]
                                    if state == .added || state == .addedInEditMode {
                                        out[position] = .nan
                                        continue
                                    }
                                }
                                out[position] = nulls[slot &>> 6] & (1 &<< UInt64(slot & 63)) != 0 ? .nan : convert(elements[slot])
                            }
                        }
                    }
                }
            }
        }
        switch columns[field] {
        case .integer(let column): fill(column) { Double($0) }
        case .double(let column): fill(column) { $0 }
        case .decimal(let column): fill(column) { Value.decimal($0).doubleValue ?? .nan }
        case .boolean(let column): fill(column) { $0 ? 1 : 0 }
        case .date(let column): fill(column) { $0.javaScriptTime }
        case .string, .guid, .blob: break
        }
    }

    private func notNumeric(_ name: String) -> RelataError {
        RelataError(.typeMismatch, "the field is not numeric, boolean or a date", table: self.name, field: name)
    }
}

extension Value {
    /// The value as batch work sees numbers: booleans 0 or 1, dates as JavaScript's milliseconds since 1970, NULL NaN.
    var batchNumber: Double {
        switch self {
        case .boolean(let bool): return bool ? 1 : 0
        case .date(let date): return date.javaScriptTime
        default: return doubleValue ?? .nan
        }
    }
}

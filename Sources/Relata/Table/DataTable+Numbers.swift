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
        let field = try requireFieldIndex(name)
        precondition(rows.table === self, "the row set belongs to table \(rows.table.name)")
        rows.checkValid()
        precondition(buffer.count >= rows.count, "the buffer holds \(buffer.count) values, \(rows.count) rows were given")
        let slots = rows.slots
        let store = changes
        let dirty = store.recordIndex
        func fill<E>(_ column: TypedColumn<E>, _ convert: (E) -> Double) {
            let elements = column.elements, nulls = column.nullWords
            for (index, slot) in slots.enumerated() {
                if dirty[slot] == 0 || originals {
                    if originals, dirty[slot] != 0, case let state = store.state(slot), state == .added || state == .addedInEditMode {
                        buffer[index] = .nan
                    } else {
                        buffer[index] = nulls[slot &>> 6] & (1 &<< UInt64(slot & 63)) != 0 ? .nan : convert(elements[slot])
                    }
                } else if let posted = store.postedOverride(slot, field) {
                    buffer[index] = Self.number(posted)
                } else {
                    buffer[index] = nulls[slot &>> 6] & (1 &<< UInt64(slot & 63)) != 0 ? .nan : convert(elements[slot])
                }
            }
        }
        switch columns[field] {
        case .integer(let column): fill(column) { Double($0) }
        case .double(let column): fill(column) { $0 }
        case .decimal(let column): fill(column) { Value.decimal($0).doubleValue ?? .nan }
        case .boolean(let column): fill(column) { $0 ? 1 : 0 }
        case .date(let column): fill(column) { $0.timeIntervalSince1970 }
        case .string, .guid, .blob:
            throw RelataError(.typeMismatch, "the field is not numeric, boolean or a date", table: self.name, field: name)
        }
    }

    private static func number(_ value: Value) -> Double {
        switch value {
        case .boolean(let bool): return bool ? 1 : 0
        case .date(let date): return date.timeIntervalSince1970
        default: return value.doubleValue ?? .nan
        }
    }
}

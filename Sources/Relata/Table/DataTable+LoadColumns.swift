import Foundation

extension DataTable {
    /// Loads the rows of a row stream's frame as original data (state ``RowState/unchanged``),
    /// column by column: the checks of ``loadRows(_:)`` — each value's type and range, required
    /// values, a primary key that is set and not used by another row — without a ``Value`` per cell.
    ///
    /// ```swift
    /// for event in try reader.append(chunk) {
    ///     if case .rows(let rows) = event { try clients.loadRows(rows) }
    /// }
    /// ```
    ///
    /// - Throws: the errors of ``loadRows(_:)``, naming the row's position in the batch (counting
    ///   from 1); nothing of the batch is loaded then.
    public func loadRows(_ rows: RowStreamRows) throws {
        guard rows.count > 0 else { return }
        let checked = try checkedColumns(rows)
        try withKeysForLoad { keys in
            try checkKeys(of: checked, count: rows.count, into: &keys)
            holdingNotifications {
                let slots = appendSlots(originals: checked, count: rows.count)
                if !indexes.isEmpty {
                    for slot in slots { updateIndexes(slot: slot, becameVisible: true) }
                }
                notifyChanged()
            }
        }
    }

    /// The batch's columns as this table stores them: each of its field's kind, integers in
    /// range, single floats rounded, required fields set.
    private func checkedColumns(_ rows: RowStreamRows) throws -> [Column] {
        guard rows.fieldCount == fields.count else {
            throw RelataError(.invalidImport, "the rows have \(rows.fieldCount) values each, the table has \(fields.count) fields", table: name)
        }
        let required = Set(requiredFieldIndexesForLoad)
        return try rows.columns.enumerated().map { field, column in
            let type = fields[field].type
            func failure(_ failure: CoercionFailure, row: Int) -> RelataError {
                RelataError(failure.code, failure.message, table: name, field: fields[field].name, location: LoadLocation.row(row + 1).text)
            }
            var checked = column
            switch (column, columns[field]) {
            case (.integer(let values), .integer):
                if let range = type.integerRange, let row = values.elements.indices.first(where: { !values.isNull($0) && !range.contains(values.elements[$0]) }) {
                    do throws(CoercionFailure) { _ = try type.coerced(.integer(values.elements[row])) } catch { throw failure(error, row: row) }
                }
            case (.double(let values), .double):
                if type == .singleFloat { checked = .double(values.mapped { Double(Float($0)) }) }
            case (.decimal, .decimal), (.boolean, .boolean), (.string, .string), (.date, .date), (.guid, .guid), (.blob, .blob):
                break
            default:
                // Another kind of column: each value through the table's coercion, as loadRows does.
                let typed = Column(for: type)
                for row in 0..<rows.count {
                    do throws(CoercionFailure) { typed.append(try type.coerced(column.value(at: row))) } catch { throw failure(error, row: row) }
                }
                checked = typed
            }
            if required.contains(field), let row = checked.firstNull {
                throw requiredValueMissingOnLoad(field: field, location: .row(row + 1))
            }
            return checked
        }
    }

    /// Adds the batch's keys to `keys`, failing at the first that is NULL or in use.
    private func checkKeys(of columns: [Column], count: Int, into keys: inout KeySet) throws {
        guard !keyFieldIndexes.isEmpty else { return }
        if keyFieldIndexes.count == 1, case .integer(let key) = columns[keyFieldIndexes[0]] {
            keys.reserveCapacity(integers: count)
            for row in 0..<count {
                guard let value = key.element(at: row), keys.insert(integer: value) else {
                    throw keyErrorOnLoad([key.value(at: row)], location: .row(row + 1))
                }
            }
            return
        }
        for row in 0..<count {
            let key = keyFieldIndexes.map { columns[$0].value(at: row) }
            guard keys.insert(key) else { throw keyErrorOnLoad(key, location: .row(row + 1)) }
        }
    }
}

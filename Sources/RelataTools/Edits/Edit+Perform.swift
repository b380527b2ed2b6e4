import Relata
import RelataScript

extension LocalDataAdapter {
    /// Makes one edit on the adapter's tables; see ``Edit/perform(on:aliases:)``.
    ///
    /// ```swift
    /// var aliases: [String: DataTableRow] = [:]
    /// for edit in try Edit.list(contentsOf: editsFile) {
    ///     let row = try adapter.perform(edit, aliases: &aliases)
    /// }
    /// ```
    @discardableResult
    public func perform(_ edit: Edit, aliases: inout [String: DataTableRow]) throws -> DataTableRow {
        guard table(named: edit.table) != nil else { throw unknownTable(edit.table) }
        return try edit.perform(on: tables, aliases: &aliases)
    }
}

extension Edit {
    /// Makes one edit as a user would, with the table's rules: an insert adds a row
    /// (`onNewRow`, then the given values, then `beforePost`/`beforeInsert`), an
    /// update writes its values as one edit (`beforePost`/`beforeUpdate`), a delete
    /// removes the row (`beforeDelete`). A rule's `fail()` or a bad value throws,
    /// and the table is left as it was.
    ///
    /// Works on any tables with rules attached: a ``LocalDataAdapter``'s, or a remote adapter's.
    ///
    /// ```swift
    /// var aliases: [String: DataTableRow] = [:]
    /// let row = try edit.perform(on: adapter.tables, aliases: &aliases)
    /// ```
    /// - Parameter aliases: rows earlier inserts named with `as`; this insert's row is added.
    /// - Returns: the row inserted, updated or deleted.
    @discardableResult
    public func perform(on tables: [DataTable], aliases: inout [String: DataTableRow]) throws -> DataTableRow {
        guard let table = tables.first(where: { $0.name.equalsIgnoringCase(self.table) }) else {
            throw RelataError(.unknownTable, "there is no table '\(self.table)' (tables: \(tables.map(\.name).joined(separator: ", ")))",
                              table: self.table)
        }
        let fieldValues = try values.reduce(into: [String: Value]()) { result, entry in
            result[entry.key] = try resolve(entry.value, forField: entry.key, in: table, aliases: aliases)
        }
        switch operation {
        case .insert:
            let row = try table.addNewRow(values: fieldValues)
            if let alias { aliases[alias] = row }
            return row
        case .update:
            let row = try row(of: table, aliases: aliases)
            try row.setValues(fieldValues)
            return row
        case .delete:
            let row = try row(of: table, aliases: aliases)
            try table.removeRow(row)
            return row
        }
    }

    /// The row the edit's key names: its values, or fields of rows inserted earlier.
    private func row(of table: DataTable, aliases: [String: DataTableRow]) throws -> DataTableRow {
        let keyFields = table.primaryKeyFields
        guard key.count == keyFields.count else {
            throw RelataError(.invalidSchema, "the key has \(key.count) values; the primary key of \(table.name) has \(keyFields.count) (\(keyFields.map(\.name).joined(separator: ", ")))",
                              table: table.name)
        }
        let values = try zip(keyFields, key).map { field, part in try resolve(part, forField: field.name, in: table, aliases: aliases) }
        guard let row = try table.row(forPrimaryKey: values) else {
            let text = zip(keyFields, values).map { "\($0.name)=\($1)" }.joined(separator: ", ")
            throw RelataError(.rowNotFound, "no row has the key \(text)", table: table.name)
        }
        return row
    }

    private func resolve(_ value: Edit.EditValue, forField name: String, in table: DataTable,
                         aliases: [String: DataTableRow]) throws -> Value {
        switch value {
        case .value(let raw):
            guard let field = table.field(named: name) else {
                if let virtual = table.virtualFieldNames.first(where: { $0.equalsIgnoringCase(name) }) {
                    throw RelataError(.readOnlyField, "calculated and lookup fields are read-only; their values come from other fields",
                                      table: table.name, field: virtual)
                }
                throw RelataError(.unknownField, "the table has no such field (fields: \(table.fields.map(\.name).joined(separator: ", ")))",
                                  table: table.name, field: name)
            }
            do { return try field.value(fromJSON: raw) } catch var error as RelataError {
                error.table = table.name
                throw error
            }
        case .reference(let alias, let field):
            guard let row = aliases[alias] else {
                throw RelataError(.invalidSchema, "{\"ref\": \"\(alias).\(field)\"} names no row: no earlier insert has \"as\": \"\(alias)\"",
                                  table: table.name, field: name)
            }
            guard row.isInTable else {
                throw RelataError(.rowNotFound, "{\"ref\": \"\(alias).\(field)\"} names a row an earlier edit deleted",
                                  table: table.name, field: name)
            }
            return try row.value(forKey: field)
        }
    }
}

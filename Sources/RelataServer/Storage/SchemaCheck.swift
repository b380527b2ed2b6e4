import Relata

/// The schema's tables against the database's, at a server's start: a column the schema has and
/// the database lacks, of another type, or `NOT NULL` where the schema allows NULL — or a column
/// only the database has that refuses NULL — would fail requests later with the database's words,
/// so the start is refused, naming each difference and the statement that fixes an additive one.
struct SchemaCheck {
    let storage: SQLStorage

    /// What differs, one line each; empty when the database can hold the schema's tables.
    func differences(in connection: any SQLConnection) throws -> [String] {
        let dialect = storage.dialect
        var found: [String] = []
        for table in storage.schema.tables {
            let stored = table.physicalName
            let query = dialect.columnsQuery(of: stored)
            let columns = try connection.rows(query.sql, query.arguments, reading: [
                FieldDefinition("name", .string), FieldDefinition("type", .string), FieldDefinition("notNull", .integer),
            ]).map { (name: $0[0].stringValue ?? "", type: $0[1].stringValue ?? "", notNull: $0[2].integerValue == 1) }
            let byName = Dictionary(columns.map { ($0.name.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
            var expected: Set<String> = []
            for field in table.fields {
                let column = table.column(of: field.name)
                expected.insert(column.lowercased())
                let place = "\(table.name).\(field.name)" + (column == field.name ? "" : " (column \(column))")
                guard let actual = byName[column.lowercased()] else {
                    let type = dialect.columnType(of: field)
                    found.append("\(place): the database has no such column; add it: ALTER TABLE \(storage.sqlTable(table.name)) ADD COLUMN \(dialect.quote(column)) \(type)"
                                 + (field.required ? " (then fill it and make it NOT NULL: the field is required)" : ""))
                    continue
                }
                if !dialect.storesValues(of: field, inColumnDeclared: actual.type) {
                    found.append("\(place): the column is \(actual.type.isEmpty ? "untyped" : actual.type), the field is \(field.type.rawValue) (\(dialect.columnType(of: field))); "
                                 + "change the column's type, or the field's")
                }
                if actual.notNull && !field.required && !field.primaryKey {
                    found.append("\(place): the column is NOT NULL, the field may be NULL; mark the field required, or drop the column's NOT NULL")
                }
            }
            for column in columns where !expected.contains(column.name.lowercased()) && column.notNull {
                found.append("\(table.name): the database's column \(column.name) is NOT NULL and the schema has no field for it, so no row can be added; "
                             + "add the field to the schema, or let the column be NULL")
            }
        }
        return found
    }
}

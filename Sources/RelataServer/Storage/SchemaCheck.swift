import Relata

/// The schema's tables against the database's: what a server's start refuses (a column the schema
/// has and the database lacks, of another type, `NOT NULL` where the schema allows NULL, a
/// `NOT NULL` column the schema lacks, another primary key, a missing foreign key) — requests
/// would fail on them later with the database's words — and what ``SchemaMigration`` adds.
struct SchemaCheck {
    let storage: SQLStorage

    /// One table as the database has it, against its definition.
    struct TableComparison {
        let table: TableDefinition
        /// The database has no such table.
        var isMissing = false
        var missingColumns: [FieldDefinition] = []
        var missingForeignKeys: [ForeignKeyDefinition] = []
        /// Columns only the database has, by stored name, and whether each is NOT NULL.
        var extraColumns: [(name: String, notNull: Bool)] = []
        /// Differences no migration makes by itself, each with what to do instead.
        var byHand: [String] = []

        var matches: Bool {
            !isMissing && missingColumns.isEmpty && missingForeignKeys.isEmpty && byHand.isEmpty
        }
    }

    /// Every table of the schema compared with the database.
    func compare(in connection: any SQLConnection) throws -> [TableComparison] {
        try storage.schema.tables.map { try compare($0, in: connection) }
    }

    /// Whether the database has no table of this name.
    func isMissing(_ table: TableDefinition, in connection: any SQLConnection) throws -> Bool {
        let query = storage.dialect.columnsQuery(of: table.physicalName)
        return try connection.value(query.sql, query.arguments, reading: FieldDefinition("name", .string)) == nil
    }

    /// What differs, one line each; empty when the database can hold the schema's tables.
    func differences(in connection: any SQLConnection) throws -> [String] {
        try compare(in: connection).flatMap(describe)
    }

    /// A table's differences as a person reads them, saying what fixes each.
    func describe(_ comparison: TableComparison) -> [String] {
        let table = comparison.table
        if comparison.isMissing { return ["\(Self.label(of: table)): the database has no such table; relata migrate creates it"] }
        var lines: [String] = []
        for field in comparison.missingColumns {
            let column = table.column(of: field.name)
            lines.append("\(place(field.name, of: table)): the database has no such column; add it with relata migrate, or: "
                         + "ALTER TABLE \(storage.sqlTable(table.name)) ADD COLUMN \(storage.dialect.quote(column)) \(storage.dialect.columnType(of: field))"
                         + (field.required ? " (then fill it and make it NOT NULL: the field is required)" : ""))
        }
        for key in comparison.missingForeignKeys {
            lines.append("\(place(key.field, of: table)): the database has no foreign key to \(key.references).\(key.referencedField); add it with relata migrate")
        }
        return lines + comparison.byHand
    }

    /// A table as messages name it: with its stored name when that differs.
    static func label(of table: TableDefinition) -> String {
        table.physicalName == table.name ? table.name : "\(table.name) (stored as \(table.physicalName))"
    }

    private func place(_ field: String, of table: TableDefinition) -> String {
        let column = table.column(of: field)
        return "\(table.name).\(field)" + (column == field ? "" : " (column \(column))")
    }

    func compare(_ table: TableDefinition, in connection: any SQLConnection) throws -> TableComparison {
        let dialect = storage.dialect
        var comparison = TableComparison(table: table)
        let stored = table.physicalName
        let query = dialect.columnsQuery(of: stored)
        let columns = try connection.rows(query.sql, query.arguments, reading: [
            FieldDefinition("name", .string), FieldDefinition("type", .string), FieldDefinition("notNull", .integer),
        ]).map { (name: $0[0].stringValue ?? "", type: $0[1].stringValue ?? "", notNull: $0[2].integerValue == 1) }
        guard !columns.isEmpty else {
            comparison.isMissing = true
            return comparison
        }
        let byName = Dictionary(columns.map { ($0.name.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        var expected: Set<String> = []
        for field in table.fields {
            let column = table.column(of: field.name)
            expected.insert(column.lowercased())
            let place = place(field.name, of: table)
            guard let actual = byName[column.lowercased()] else {
                comparison.missingColumns.append(field)
                continue
            }
            if !dialect.storesValues(of: field, inColumnDeclared: actual.type) {
                comparison.byHand.append("\(place): the column is \(actual.type.isEmpty ? "untyped" : actual.type), the field is \(field.type.rawValue) (\(dialect.columnType(of: field))); "
                                         + "change the column's type, or the field's (relata migrate does not retype a column: its values may not convert)")
            }
            if actual.notNull && !field.required && !field.primaryKey {
                comparison.byHand.append("\(place): the column is NOT NULL, the field may be NULL; mark the field required, or drop the column's NOT NULL")
            }
        }
        for column in columns where !expected.contains(column.name.lowercased()) {
            comparison.extraColumns.append((column.name, column.notNull))
            if column.notNull {
                comparison.byHand.append("\(table.name): the database's column \(column.name) is NOT NULL and the schema has no field for it, so no row can be added; "
                                         + "add the field to the schema, or let the column be NULL (relata migrate drops no column)")
            }
        }
        let keyQuery = dialect.primaryKeyQuery(of: stored)
        let storedKey = try connection.rows(keyQuery.sql, keyQuery.arguments, reading: [FieldDefinition("name", .string)]).map { $0[0].stringValue?.lowercased() ?? "" }
        let schemaKey = table.fields.filter(\.primaryKey).map { table.column(of: $0.name).lowercased() }
        if storedKey != schemaKey {
            comparison.byHand.append("\(table.name): the database's primary key is (\(storedKey.joined(separator: ", "))), the schema's is (\(schemaKey.joined(separator: ", "))); "
                                     + "change the key by hand (relata migrate does not: rows may clash under another key)")
        }
        let foreignQuery = dialect.foreignKeysQuery(of: stored)
        let storedForeign = Set(try connection.rows(foreignQuery.sql, foreignQuery.arguments, reading: [
            FieldDefinition("column", .string), FieldDefinition("table", .string), FieldDefinition("referenced", .string),
        ]).map { $0.map { $0.stringValue?.lowercased() ?? "" }.joined(separator: "|") })
        for key in table.foreignKeys {
            let referenced = storage.schema.tables.first { $0.name.equalsIgnoringCase(key.references) }
            let wanted = [table.column(of: key.field), referenced?.physicalName ?? key.references,
                          referenced?.column(of: key.referencedField) ?? key.referencedField].map { $0.lowercased() }
            let withoutColumn = wanted[0] + "|" + wanted[1] + "|"   // SQLite leaves out a referenced primary key's name
            if !storedForeign.contains(wanted.joined(separator: "|")) && !storedForeign.contains(withoutColumn) {
                comparison.missingForeignKeys.append(key)
            }
        }
        return comparison
    }
}

import Relata

/// Brings a database's tables to a schema by additive changes only — new tables, new columns
/// (a required one filled with its field's `defaultValue`), new foreign keys — in one
/// transaction, on SQLite and PostgreSQL. A change that could lose or misread data (a column of
/// another type, another primary key, a `NOT NULL` column the schema lacks) is refused with what
/// to do instead, and nothing is changed. Servers starting meanwhile wait for it to end.
///
/// SQLite cannot add a foreign key or `NOT NULL` to an existing table: such a table is built
/// anew, its rows copied, and every foreign key checked before the commit.
///
/// ```swift
/// let plan = try SchemaMigration.run(schema, on: SQLiteDatabase(path: "shop.sqlite"), dryRun: true)
/// for step in plan.steps { print(step) }   // ALTER TABLE "Books" ADD COLUMN "Year" INTEGER
/// ```
public struct SchemaMigration: Sendable {
    /// One statement of a migration, with the values bound to its placeholders.
    public struct Step: Sendable, CustomStringConvertible {
        public let sql: String
        public let arguments: [Value]
        /// The placeholders' values as the statement is shown: `-- ?1 = 100`.
        private let shownArguments: String

        init(sql: String, arguments: [Value] = [], dialect: any SQLDialect) {
            self.sql = sql
            self.arguments = arguments
            shownArguments = arguments.enumerated().map { "\(dialect.placeholder($0.offset + 1)) = \($0.element)" }.joined(separator: ", ")
        }

        public var description: String {
            arguments.isEmpty ? sql : sql + "  -- " + shownArguments
        }
    }

    /// The statements, in order; empty when the database matches the schema.
    public let steps: [Step]

    /// Plans the migration and, unless `dryRun`, runs it, in one transaction.
    ///
    /// - Throws: ``RelataError/Code/invalidSchema`` naming each change a migration does not
    ///   make (nothing is changed then), or when a new foreign key finds rows pointing nowhere.
    public static func run(_ schema: SchemaDefinition, on database: any SQLDatabase, dryRun: Bool) throws -> SchemaMigration {
        let storage = SQLStorage(unchecked: database, schema: schema)
        let rebuild = storage.dialect.tableRebuild
        return try database.write { connection in
            if let rebuild { try connection.execute(rebuild.foreignKeysOff, []) }
            defer { if let rebuild { _ = try? connection.execute(rebuild.foreignKeysOn, []) } }
            try connection.begin()
            do {
                if let lock = storage.dialect.schemaChangeLock { try connection.execute(lock, []) }
                let plan = try Planner(storage: storage).plan(in: connection)
                guard plan.refusals.isEmpty else {
                    throw RelataError(.invalidSchema, "relata migrate makes only additive changes, and the schema \(schema.name) needs \(plan.refusals.count) it does not make; nothing was changed:\n  "
                                      + plan.refusals.joined(separator: "\n  "))
                }
                if dryRun || plan.steps.isEmpty {
                    try connection.rollback()
                    return SchemaMigration(steps: plan.steps)
                }
                for step in plan.steps { try connection.execute(step.sql, step.arguments) }
                if let rebuild {
                    let broken = try connection.rows(rebuild.foreignKeyCheck, [], reading: [FieldDefinition("table", .string)])
                    if let table = broken.first?[0].stringValue {
                        throw RelataError(.invalidSchema, "\(broken.count) row(s) of \(table) point to rows that do not exist, so the new foreign keys cannot hold; fix those rows first; nothing was changed")
                    }
                }
                let left = try SchemaCheck(storage: storage).differences(in: connection)
                guard left.isEmpty else {
                    throw RelataError(.invalidSchema, "the migration did not bring the database to the schema; nothing was changed:\n  " + left.joined(separator: "\n  "))
                }
                try connection.commit()
                return SchemaMigration(steps: plan.steps)
            } catch let error as SQLError where error.kind == .constraint {
                try? connection.rollback()
                throw RelataError(.invalidSchema, "the migration breaks a constraint on the rows already stored (\(error.message)); fix those rows first; nothing was changed")
            } catch {
                try? connection.rollback()
                throw error
            }
        }
    }
}

/// The statements that bring each table to the schema, and the changes it will not make.
private struct Planner {
    let storage: SQLStorage
    var dialect: any SQLDialect { storage.dialect }

    func plan(in connection: any SQLConnection) throws -> (steps: [SchemaMigration.Step], refusals: [String]) {
        let check = SchemaCheck(storage: storage)
        var steps: [SchemaMigration.Step] = []
        var refusals: [String] = []
        for table in storage.schema.dependencyOrder {
            let comparison = try check.compare(table, in: connection)
            if comparison.isMissing {
                if let renamed = try renamedFrom(table, in: connection) {
                    refusals.append("\(SchemaCheck.label(of: table)): the database has no such table, but its table \(renamed) has the same columns; if it is \(renamed) renamed, "
                                    + "rename it by hand (ALTER TABLE \(dialect.quote(renamed)) RENAME TO \(storage.sqlTable(table.name))) or give the table "
                                    + "\"storedName\": \"\(renamed)\" (relata migrate does not guess, and would make an empty table)")
                } else {
                    steps.append(.init(sql: storage.createStatement(for: table), dialect: dialect))
                }
                continue
            }
            refusals += comparison.byHand
            guard !comparison.missingColumns.isEmpty || !comparison.missingForeignKeys.isEmpty else { continue }
            let rows = try connection.value("SELECT COUNT(*) FROM \(storage.sqlTable(table.name))", [], reading: FieldDefinition("n", .integer))?.integerValue ?? 0
            for field in comparison.missingColumns where field.required && field.defaultValue == nil && rows > 0 {
                refusals.append("\(table.name).\(field.name): the field is required and has no defaultValue, and the table has \(rows) row(s) that would have none; "
                                + "give the field a defaultValue, or add it as optional, fill it, then mark it required")
            }
            let needsRebuild = dialect.tableRebuild != nil && (!comparison.missingForeignKeys.isEmpty || comparison.missingColumns.contains(where: \.required))
            if needsRebuild {
                if !comparison.extraColumns.isEmpty {
                    refusals.append("\(table.name): SQLite adds a foreign key or a required column by building the table anew, which would drop its columns the schema lacks "
                                    + "(\(comparison.extraColumns.map(\.name).joined(separator: ", "))); add them to the schema, or drop them by hand first")
                    continue
                }
                steps += rebuild(table, adding: comparison.missingColumns)
            } else {
                steps += alter(table, adding: comparison.missingColumns, foreignKeys: comparison.missingForeignKeys)
            }
        }
        return (steps, refusals)
    }

    /// A table of the database the schema does not know, with the same columns as `table`:
    /// what a renamed table looks like.
    private func renamedFrom(_ table: TableDefinition, in connection: any SQLConnection) throws -> String? {
        let known = Set(storage.schema.tables.map { $0.physicalName.lowercased() })
        let wanted = Set(table.fields.map { table.column(of: $0.name).lowercased() })
        let names = try connection.rows(dialect.tablesQuery, [], reading: [FieldDefinition("name", .string)]).compactMap { $0[0].stringValue }
        for name in names.sorted() where !known.contains(name.lowercased()) && !name.lowercased().hasPrefix("relata_") {
            let query = dialect.columnsQuery(of: name)
            let columns = Set(try connection.rows(query.sql, query.arguments, reading: [FieldDefinition("name", .string)]).compactMap { $0[0].stringValue?.lowercased() })
            if columns == wanted { return name }
        }
        return nil
    }

    /// `ALTER TABLE` statements: each column added (filled with its default and made NOT NULL
    /// when required), each foreign key added.
    private func alter(_ table: TableDefinition, adding fields: [FieldDefinition], foreignKeys: [ForeignKeyDefinition]) -> [SchemaMigration.Step] {
        let name = storage.sqlTable(table.name)
        var steps: [SchemaMigration.Step] = []
        for field in fields {
            let column = storage.sqlColumn(field.name, of: table.name)
            steps.append(.init(sql: "ALTER TABLE \(name) ADD COLUMN \(column) \(dialect.columnType(of: field))", dialect: dialect))
            guard field.required else { continue }
            if let value = field.defaultValue {
                steps.append(.init(sql: "UPDATE \(name) SET \(column) = \(dialect.placeholder(1))", arguments: [value], dialect: dialect))
            }
            steps.append(.init(sql: "ALTER TABLE \(name) ALTER COLUMN \(column) SET NOT NULL", dialect: dialect))
        }
        for key in foreignKeys {
            steps.append(.init(sql: "ALTER TABLE \(name) ADD FOREIGN KEY (\(storage.sqlColumn(key.field, of: table.name))) REFERENCES \(storage.sqlTable(key.references)) "
                               + "(\(storage.sqlColumn(key.referencedField, of: key.references)))\(dialect.foreignKeySuffix)", dialect: dialect))
        }
        return steps
    }

    /// The table built anew under a passing name, its rows copied (new required columns get
    /// their default), the old one dropped and the new one renamed.
    private func rebuild(_ table: TableDefinition, adding fields: [FieldDefinition]) -> [SchemaMigration.Step] {
        let name = storage.sqlTable(table.name)
        let passing = dialect.quote("relata_migrating_" + table.physicalName)
        let added = Set(fields.map { $0.name.lowercased() })
        let kept = table.fields.filter { !added.contains($0.name.lowercased()) }.map { storage.sqlColumn($0.name, of: table.name) }
        let filled = fields.filter { $0.required && $0.defaultValue != nil }
        let columns = kept + filled.map { storage.sqlColumn($0.name, of: table.name) }
        let values = kept + filled.indices.map { dialect.placeholder($0 + 1) }
        return [
            .init(sql: "DROP TABLE IF EXISTS \(passing)", dialect: dialect),
            .init(sql: storage.createStatement(for: table, as: passing), dialect: dialect),
            .init(sql: "INSERT INTO \(passing) (\(columns.joined(separator: ", "))) SELECT \(values.joined(separator: ", ")) FROM \(name)",
                  arguments: filled.compactMap(\.defaultValue), dialect: dialect),
            .init(sql: "DROP TABLE \(name)", dialect: dialect),
            .init(sql: "ALTER TABLE \(passing) RENAME TO \(name)", dialect: dialect),
        ]
    }
}

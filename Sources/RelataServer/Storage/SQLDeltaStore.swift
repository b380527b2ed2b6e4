import Relata
import RelataScript

/// A ``DeltaStore`` over a SQL database: one transaction per unit of work, one
/// statement per change, written from the change's values.
///
/// - Inserts write the log-changes fields but auto-increment keys; the key the
///   database gives comes back as a refreshed value, and replaces the client's
///   temporary key in the rows of the same unit that refer to it (declared foreign keys).
///   Tables are written masters first (``Relata/SchemaDefinition/dependencyOrder``), whatever
///   order their deltas were processed in.
/// - Updates and deletes find the row by its original key *and* its original
///   log-changes values: a row changed underneath is not touched, and the
///   change fails as a ``FailureKind/conflict`` — nothing is overwritten silently.
/// - Foreign keys are checked before anything is written, by the same check as every
///   other site (``ForeignKeyCheck``), over the unit's rows and the stored parent and
///   child rows it touches: a change that would break one fails with the same words as
///   offline. The database checks them again at the commit (deferred, so the order of
///   the statements does not matter — a detail row may be deleted after its order).
/// - A statement the database refuses otherwise (NOT NULL) fails its change
///   as a ``FailureKind/constraint`` with the database's words.
final class SQLDeltaStore: DeltaStore {
    let storage: SQLStorage
    let connection: any SQLConnection
    /// The unit's data: its tables, whose changes made by rules join the unit.
    let access: SQLDataAccess
    var data: TableDataAccess { access.tables }
    private var carried = UnitOfWorkChanges()
    /// Real keys of this unit's inserts, by "table/field/temporary key" (lower case).
    private var realKeys: [String: Int64] = [:]

    /// Runs in the transaction just before its commit, with the processed deltas: what must be
    /// written with the changes or not at all (the apply's record in the ``ApplyLog``).
    var beforeCommit: (([Delta]) throws -> Void)?
    /// True once the transaction committed.
    private(set) var committed = false

    /// A store writing in the transaction the caller began on `connection` (its commit or rollback ends it).
    init(storage: SQLStorage, connection: any SQLConnection, access: SQLDataAccess) {
        self.storage = storage
        self.connection = connection
        self.access = access
    }

    func begin(_ deltas: [Delta]) throws {
        try connection.deferForeignKeys()
        data.startRecordingChanges()
        carried = UnitOfWorkChanges()
        for delta in deltas { carried.carry(delta) }
    }

    func changesMadeByRules() throws -> [Delta] {
        try data.deltasOfRecordedChanges(notIn: &carried)
    }

    func store(_ deltas: inout [Delta]) throws {
        try checkForeignKeys(&deltas)
        // Masters before their details whatever the update order: a detail's temporary key
        // becomes its master's real key only once the master's insert is written.
        let rank = Dictionary(storage.schema.dependencyOrder.enumerated().map { ($1.name.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        let order = deltas.indices.sorted { (rank[deltas[$0].tableName.lowercased()] ?? .max, $0) < (rank[deltas[$1].tableName.lowercased()] ?? .max, $1) }
        for index in order {
            let writes = TableWrites(storage: storage, table: try storage.definition(of: deltas[index].tableName),
                                     logged: deltas[index].loggedFields)
            for change in deltas[index].changes.indices where deltas[index].changes[change].status == .resolved {
                do {
                    try write(&deltas[index].changes[change], with: writes)
                } catch let refusal as Refusal {
                    deltas[index].changes[change].fail(refusal.failure)
                } catch let error as SQLError {
                    deltas[index].changes[change].fail(ChangeFailure(error.kind == .constraint ? .constraint : .storeError, error.message))
                }
            }
        }
    }

    /// Loads the stored rows the unit's changes point to or are pointed at by, connects the
    /// unit's tables by the schema's foreign keys, and fails the changes that would break one.
    private func checkForeignKeys(_ deltas: inout [Delta]) throws {
        let schema = storage.schema
        let tables = try deltas.map { try access.table($0.tableName) }
        for (delta, table) in zip(deltas, tables) {
            guard let definition = schema.table(named: table.name) else { continue }
            let live = delta.changes.lazy.filter { $0.status != .failed }   // read only for a table a key involves
            for key in definition.foreignKeys {
                let parent = try access.table(key.references)
                try table.addForeignKey(key.field, references: parent, field: key.referencedField)
                let pointedAt = Array(live.filter { $0.type != .delete }.compactMap { $0.newValues[key.field] })
                try storage.loadRows(where: key.referencedField, isIn: pointedAt, into: parent, in: connection)
            }
            for child in schema.tables {
                for key in child.foreignKeys where key.references.equalsIgnoringCase(table.name) {
                    let childTable = try access.table(child.name)
                    try childTable.addForeignKey(key.field, references: table, field: key.referencedField)
                    let released = Array(live.filter { $0.type != .insert }.compactMap { $0.oldValues[key.referencedField] })
                    try storage.loadRows(where: key.field, isIn: released, into: childTable, in: connection)
                }
            }
        }
        ForeignKeyCheck.failViolations(in: &deltas, tables: tables)
    }

    func commit(_ deltas: [Delta]) throws {
        data.isRecordingChanges = false
        try beforeCommit?(deltas)
        // A rule's `afterCommit` runs next and may tell of the commit: then it must be durable
        // now, not shared with the applies after this one.
        if access.runtime?.handles(.afterCommit) == true {
            try connection.commitDurably()
        } else {
            try connection.commit()
        }
        committed = true
    }

    func rollback(_ deltas: [Delta]) {
        data.isRecordingChanges = false
        try? connection.rollback()
    }

    func discard(_ deltas: [Delta]) { rollback(deltas) }

    private func write(_ change: inout DeltaChange, with writes: TableWrites) throws {
        let table = writes.table
        replaceTemporaryKeys(in: &change, of: table)
        switch change.type {
        case .insert:
            let arguments = writes.inserted.map { change.newValues[$0.name] ?? .null }
            guard let auto = writes.autoIncrement else {
                try connection.execute(writes.insertSQL, arguments)
                return
            }
            // The key the database gives comes back with the insert (RETURNING: SQLite and PostgreSQL alike).
            let returned = try connection.value(writes.insertReturningSQL, arguments, reading: FieldDefinition(auto.name, .integer))
            guard let real = returned?.integerValue else { throw SQLError(.other, "the database gave the new row of \(table.name) no \(auto.name)") }
            if let temporary = change.newValues[auto.name]?.integerValue {
                realKeys[keyName(table.name, auto.name, temporary)] = real
            }
            change.refreshedValues[auto.name] = .integer(real)
        case .update:
            writes.prepare(change)
            guard !writes.statement.changed.isEmpty else { return }
            if try connection.execute(writes.updateSQL(), writes.statement.arguments) == 0 {
                throw Refusal(failure: conflict(change, keys: writes.keys))
            }
        case .delete:
            writes.prepare(change)
            if try connection.execute(writes.deleteSQL(), writes.statement.arguments) == 0 {
                throw Refusal(failure: conflict(change, keys: writes.keys))
            }
        }
    }

    private func conflict(_ change: DeltaChange, keys: [FieldDefinition]) -> ChangeFailure {
        let key = keys.map { "\($0.name)=\((change.oldValues[$0.name] ?? .null).text)" }.joined(separator: ", ")
        return ChangeFailure(.conflict, "the row (\(key)) changed or went since it was read")
    }

    /// A foreign key holding the temporary key of a row inserted earlier in this unit gets its real key.
    private func replaceTemporaryKeys(in change: inout DeltaChange, of table: Relata.TableDefinition) {
        for key in table.foreignKeys {
            guard let value = change.newValues[key.field]?.integerValue, value < 0,
                  let real = realKeys[keyName(key.references, key.referencedField, value)] else { continue }
            change.newValues[key.field] = .integer(real)
            change.refreshedValues[key.field] = .integer(real)
        }
    }

    private func keyName(_ table: String, _ field: String, _ key: Int64) -> String {
        "\(table.lowercased())/\(field.lowercased())/\(key)"
    }
}

/// A change the store refuses on purpose (a conflict), as opposed to a database error.
private struct Refusal: Error {
    let failure: ChangeFailure
}

/// What the changes of one delta share: the table's written and key fields, and the SQL
/// of each shape of change (which fields it sets, which originals it compares), made once
/// per shape rather than once per change.
private final class TableWrites {
    let storage: SQLStorage
    let table: Relata.TableDefinition
    /// The log-changes fields the delta names, and the key: those a change writes and compares.
    let logged: [FieldDefinition]
    let keys: [FieldDefinition]
    /// What an insert writes: the logged fields but an auto-increment key.
    let inserted: [FieldDefinition]
    let autoIncrement: FieldDefinition?
    private var updates: [[Int]: String] = [:]
    private var deletes: [[Int]: String] = [:]
    private var lastUpdate: (changed: [Int], compared: [Int], sql: String)?

    init(storage: SQLStorage, table: Relata.TableDefinition, logged names: [String]) {
        self.storage = storage
        self.table = table
        let logged = Set(names.map { $0.lowercased() })
        // Key fields are always written (``FieldDefinition/logChanges``), whatever the delta says.
        self.logged = table.fields.filter { $0.primaryKey || logged.contains($0.name.lowercased()) }
        keys = table.fields.filter(\.primaryKey)
        inserted = self.logged.filter { !$0.autoIncrement }
        autoIncrement = table.fields.first(where: \.autoIncrement)
        var keyCount = 0
        let keyIndexes: [Int?] = self.logged.map { field in
            guard field.primaryKey else { return nil }
            defer { keyCount += 1 }
            return keyCount
        }
        statement = Statement(logged: self.logged.map(\.name), keyIndexes: keyIndexes)
    }

    private var dialect: any SQLDialect { storage.dialect }
    private func column(_ field: FieldDefinition) -> String { storage.sqlColumn(field.name, of: table.name) }

    private(set) lazy var insertSQL: String = {
        let into = inserted.isEmpty ? "DEFAULT VALUES"
            : "(\(inserted.map(column).joined(separator: ", "))) VALUES (\(inserted.indices.map { dialect.placeholder($0 + 1) }.joined(separator: ", ")))"
        return "INSERT INTO \(storage.sqlTable(table.name)) \(into)"
    }()

    private(set) lazy var insertReturningSQL: String = {
        insertSQL + " RETURNING \(autoIncrement.map(column) ?? "")"
    }()

    /// The statement of the change ``prepare(_:)`` last saw: the positions in ``logged`` of the
    /// fields it sets (those whose new value differs from the original; none for a delete) and of
    /// the non-key fields whose original it carries, which it compares; and its arguments in the
    /// statement's order — the values set, the key's originals, the originals compared. Reused
    /// from change to change: a bulk apply allocates none of them per change.
    struct Statement {
        var changed: [Int] = [], compared: [Int] = [], arguments: [Value] = []
        /// The originals compared: the key's, then the others'.
        private var originals: [Value] = []
        /// The change's original and new values of the logged fields.
        private var old: FieldValueReader, new: FieldValueReader
        /// Where each logged field is among the keys (nil for the others).
        private let keyIndexes: [Int?]
        private let keyCount: Int

        init(logged names: [String], keyIndexes: [Int?]) {
            old = FieldValueReader(names: names)
            new = FieldValueReader(names: names)
            self.keyIndexes = keyIndexes
            keyCount = keyIndexes.lazy.compactMap { $0 }.count
        }

        /// Becomes the statement of `change`: one pass over the logged fields, each value read
        /// once (``Relata/FieldValueReader``: no name hashed), into the arrays it already has.
        mutating func make(of change: DeltaChange) {
            changed.removeAll(keepingCapacity: true)
            compared.removeAll(keepingCapacity: true)
            arguments.removeAll(keepingCapacity: true)
            originals.removeAll(keepingCapacity: true)
            for _ in 0..<keyCount { originals.append(.null) }
            let updating = change.type == .update
            old.load(change.oldValues)
            if updating { new.load(change.newValues) }
            for position in keyIndexes.indices {
                let original = old[position]
                if updating, let value = new[position], value != original {
                    changed.append(position)
                    arguments.append(value)
                }
                if let keyIndex = keyIndexes[position] {
                    originals[keyIndex] = original ?? .null
                } else if let original {
                    compared.append(position)
                    originals.append(original)
                }
            }
            arguments.append(contentsOf: originals)
        }
    }
    private(set) var statement: Statement

    /// Makes the update or delete statement of `change` (``statement``). One access to the
    /// property for the whole change: its arrays are then changed in place with no check per append.
    func prepare(_ change: DeltaChange) {
        statement.make(of: change)
    }

    /// `UPDATE … SET changed = ? … WHERE` the row as the prepared change found it.
    func updateSQL() -> String {
        // A bulk update's changes mostly share one shape: the last one answers without hashing.
        let changed = statement.changed, compared = statement.compared
        if let last = lastUpdate, last.changed == changed, last.compared == compared { return last.sql }
        let shape = changed + [-1] + compared
        let sql = updates[shape] ?? {
            let set = changed.enumerated().map { "\(column(logged[$1])) = \(dialect.placeholder($0 + 1))" }.joined(separator: ", ")
            return "UPDATE \(storage.sqlTable(table.name)) SET \(set) WHERE \(condition(comparing: compared, startingAt: changed.count + 1))"
        }()
        updates[shape] = sql
        // Copies, not the reused arrays: sharing their storage would make the next change allocate anew.
        lastUpdate = (changed.map { $0 }, compared.map { $0 }, sql)
        return sql
    }

    /// `DELETE … WHERE` the row as the prepared change found it.
    func deleteSQL() -> String {
        let compared = statement.compared
        if let known = deletes[compared] { return known }
        let sql = "DELETE FROM \(storage.sqlTable(table.name)) WHERE \(condition(comparing: compared, startingAt: 1))"
        deletes[compared.map { $0 }] = sql
        return sql
    }

    /// `key = ? AND field IS ? …`: the row as the change found it (NULL matching NULL). Keys compare
    /// with `=` (they are never NULL): PostgreSQL uses no index for `IS NOT DISTINCT FROM`, which
    /// made every change a scan of the table.
    private func condition(comparing compared: [Int], startingAt first: Int) -> String {
        let conditions = keys.enumerated().map { "\(column($1)) = \(dialect.placeholder(first + $0))" }
            + compared.enumerated().map { dialect.nullSafeEqual(column(logged[$1]), dialect.placeholder(first + keys.count + $0)) }
        return conditions.joined(separator: " AND ")
    }
}

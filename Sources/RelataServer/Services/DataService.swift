import Foundation
import Logging
import Relata
import RelataScript

/// The data server's data service over SQL: the same rule runtime as every other
/// site, authoritative here — `isServer` is true, the caller's session is the one
/// the rules see, and the user's edits are made again on the stored rows, in the user's
/// order, through the row rules (``EditReplay``) before the delta and transaction events
/// and the store.
///
/// ```swift
/// let service = try DataService(storage: SQLStorage(path: "shop.sqlite", schema: schema))
/// let processed = try await service.updateData(deltas, session: Session(values: ["User": "ann"], roles: ["Sales"]))
/// ```
public final class DataService: Sendable {
    /// Where the tables are stored.
    public let storage: SQLStorage
    /// Who may read and change which tables.
    public let permissions: TablePermissions
    let rules: RulesVersion.Current
    private let poolSize: Int
    private let timeLimit: Duration
    /// How long a DA SQL query may run in the database before it is stopped.
    let queryTimeLimit: Duration
    /// The batches applied, by apply id.
    let applyLog: ApplyLog
    /// The where expressions of reads, parsed once per text.
    let expressions = ParsedExpressions()
    /// The login table this service's schema holds, whose password is never read and whose
    /// password and roles only its writers set.
    public let loginTable: LoginTableFields?
    private let logger: Logger

    /// How long a batch's apply id is kept after its answer by default: 30 days.
    public static let defaultApplyIdRetention: Duration = .seconds(30 * 86_400)

    /// Rule runtimes a service has unless told otherwise: four per core, at least sixteen. An
    /// apply holds its runtime while it waits for the database (SQLite's one writer, a
    /// PostgreSQL answer), so more runtimes than cores keep the cores busy, and on SQLite let
    /// more applies share a commit; a rule's time limit is CPU time, so sharing a core costs a
    /// rule none of it. Each runtime takes about 1.5 MB.
    public static let defaultRuntimes = max(16, 4 * ProcessInfo.processInfo.activeProcessorCount)

    /// Creates the service with `runtimes` rule runtimes (one unit of work each at a time);
    /// `applyIdRetention` is how long an answered batch's ``ApplyId`` is remembered.
    ///
    /// - Throws: a ``ScriptError`` when a script of the schema does not compile.
    public init(storage: SQLStorage, permissions: TablePermissions = .allowAll,
                runtimes: Int = DataService.defaultRuntimes,
                timeLimit: Duration = .seconds(1), queryTimeLimit: Duration = .seconds(30),
                applyIdRetention: Duration = DataService.defaultApplyIdRetention, loginTable: LoginTableFields? = nil,
                logger: Logger = Logger(label: "relata.rules")) throws {
        self.storage = storage
        self.loginTable = loginTable
        applyLog = ApplyLog(storage: storage, retention: applyIdRetention)
        self.queryTimeLimit = queryTimeLimit
        self.permissions = permissions
        poolSize = runtimes
        self.timeLimit = timeLimit
        self.logger = logger
        rules = RulesVersion.Current(try RulesVersion(schema: storage.schema, size: runtimes, timeLimit: timeLimit, logger: logger))
    }

    /// The schema as served now: its tables never change while the server runs; its rule
    /// scripts, commands, update rules and calculated fields change with ``reloadRules(from:)``.
    public var schema: SchemaDefinition { rules.value.schema }

    /// The served schema as clients receive it — without its server-only scripts
    /// (``SchemaDefinition/sharedWithClients``) — with its version (``SchemaDefinition/version``
    /// of the whole schema, computed once per rules version: a change to a server script is a new
    /// version too).
    public var versionedSchema: (schema: SchemaDefinition, version: String) {
        let current = rules.value
        return (current.sharedSchema, current.version)
    }

    /// Replaces the rules with those of a new version of the schema, whose tables (names,
    /// fields, keys, stored names) must be the same. Requests already running finish on the
    /// rules they started with; new ones get the new rules.
    ///
    /// - Returns: whether anything changed (false for the version already served).
    /// - Throws: ``RelataError/Code/invalidSchema`` when the tables differ (that needs a
    ///   migration and a restart); a ``ScriptError`` when a new script does not compile — the
    ///   old rules stay then.
    @discardableResult
    public func reloadRules(from schema: SchemaDefinition) throws -> Bool {
        guard schema.version != rules.value.version else { return false }
        guard RulesVersion.sameTables(schema, storage.schema) else {
            throw RelataError(.invalidSchema, "the schema's tables changed; rules reload without a restart, tables do not (migrate the database and restart)",
                              location: schema.name)
        }
        rules.value = try RulesVersion(schema: schema, size: poolSize, timeLimit: timeLimit, logger: logger)
        return true
    }

    /// Applies deltas in one transaction, as the caller: the user's edits replayed on the
    /// stored rows through the row rules (``EditReplay``), then delta and transaction events, update rules and update order, optimistic
    /// concurrency, and the real keys of new rows.
    ///
    /// The transaction is serializable: the rows rules read (through `lda` too) cannot change
    /// under them before the commit, so an invariant a rule enforces holds under concurrent
    /// applies on every database. When the database cannot order the apply with concurrent ones,
    /// the whole apply — replay, rules and store — runs again (up to ``maximumAttempts`` times).
    ///
    /// With an `apply` id, the batch is applied once: its id is recorded with the answer in the
    /// same transaction, and the same id again gets that answer and applies nothing (see ``ApplyLog``).
    ///
    /// - Parameters:
    ///   - apply: the batch's id; without one, every call applies.
    ///   - rulesVersion: the rules version the client validated with; the apply is refused as
    ///     ``RelataError/Code/staleRules`` when the served rules differ (after a repeated id's answer, which stands).
    /// - Returns: the processed deltas: every change resolved (with refreshed values) or
    ///   failed (with its ``ChangeFailure``).
    /// - Throws: ``RelataError/Code/unknownTable`` for a delta of a table the schema does not
    ///   publish, ``RelataError/Code/applyIdReused`` or ``RelataError/Code/applyIdExpired`` for an
    ///   id that cannot stand for these changes; nothing is applied then.
    public func updateData(_ deltas: [Delta], session: Session, apply: ApplyId? = nil, rulesVersion: String? = nil) async throws -> [Delta] {
        try Self.checkShape(of: deltas)
        for delta in deltas {
            let definition = try storage.definition(of: delta.tableName)
            try Self.checkFieldNames(of: delta, in: definition)
            let table = definition.name
            var types: Set<DeltaChange.ChangeType> = []
            for index in delta.changes.indices where types.count < DeltaChange.ChangeType.allCases.count { types.insert(delta.changes[index].type) }
            for type in types {
                let operation: TablePermissions.Operation = type == .insert ? .insert : type == .update ? .update : .delete
                try permissions.check(operation, on: table, for: session)
            }
        }
        try loginTable?.checkWrites(of: deltas, by: session)
        let deltas = loginTable?.strippingPassword(from: deltas) ?? deltas
        let hidden = loginTable
        let storage = self.storage, log = applyLog
        let user = session.values["User"]?.stringValue ?? ""
        // Only a batch with an id is compared with its record: a large apply without one skips the work.
        let fingerprint = apply.map { _ in
            MadeMeanwhile(coveringChanges: deltas.changeCount) { try DeltaFingerprint.of(deltas, digest: CryptoSHA256()) }
        }
        let version = rules.value
        let (answer, commit) = try await version.pool.perform { runtime in
            let ((answer, recorded), commit) = try self.inSerializableTransaction { connection in
                let now = Date()
                if let apply, let fingerprint, let answer = try log.answer(for: apply, user: user, fingerprint: fingerprint.value(), of: deltas, now: now, in: connection) {
                    try connection.rollback()
                    return (answer, true)
                }
                if let rulesVersion, rulesVersion != version.version {
                    throw RelataError(.staleRules, "the changes were validated with rules \(rulesVersion); the server's rules are now \(version.version): download the schema (GetSchema), validate again and resend")
                }
                try log.purgeIfDue(now: now, in: connection)
                let data = SQLDataAccess(storage: storage, schema: version.schema, connection: connection, runtime: runtime)
                let environment = RuleEnvironment(session: session, isServer: true, dataAccess: data)
                return try runtime.withUnitEnvironment(environment) {
                    for delta in deltas {
                        let table = try data.table(delta.tableName)
                        try storage.loadRows(withKeys: Self.storedKeys(of: delta, in: table), into: table, in: connection)
                    }
                    var replayed = EditReplay(runtime: runtime).replay(deltas, on: data.tables) { try data.table($0) }
                    // Made meanwhile on another thread; a batch it cannot be made of is refused before anything is stored.
                    let batchFingerprint = try fingerprint?.value()
                    func finished(_ processed: [Delta]) throws -> [Delta] {
                        let reread = try Self.rereadingAutoRefreshFields(of: replayed.answer(processed), schema: version.schema, storage: storage, in: connection)
                        let answer = Self.sendingBackWhatDiffers(reread, from: deltas)
                        return hidden?.hidingPassword(in: answer) ?? answer
                    }
                    let store = SQLDeltaStore(storage: storage, connection: connection, access: data)
                    var committedAnswer: [Delta]?, recordedConcurrently = false
                    store.beforeCommit = { processed in
                        let answer = try finished(processed)
                        if let apply, let batchFingerprint {
                            do {
                                try log.record(apply, user: user, fingerprint: batchFingerprint, answer: answer, batch: deltas, now: now, in: connection)
                            } catch let error as SQLError where error.kind == .constraint {
                                recordedConcurrently = true   // the same batch, sent again meanwhile, was applied: its answer stands
                                throw error
                            }
                        }
                        committedAnswer = answer
                    }
                    let processed = try Self.processor(for: version.schema, runtime: runtime).process(replayed.takeDeltas(), store: store)
                    if store.committed, let committedAnswer { return (committedAnswer, true) }
                    if connection.mustRetryTransaction || recordedConcurrently { throw RetryTransaction() }
                    return (try finished(processed), false)
                }
            }
            // Nothing was stored: the verdicts are the batch's answer all the same, unless a store
            // error (which trying again may not meet) caused them.
            if let apply, let fingerprint, !recorded, !answer.contains(where: { delta in delta.changes.indices.contains { delta.changes[$0].failure?.kind == .storeError } }) {
                try? storage.write { connection in
                    try connection.begin()
                    try connection.committing { try log.record(apply, user: user, fingerprint: fingerprint.value(), answer: answer, batch: deltas, now: Date(), in: $0) }
                }
            }
            return (answer, commit)
        }
        // The runtime is free for the next apply meanwhile: the more applies share a commit, the fewer commits.
        try await commit.durable()
        return answer
    }

    /// How many times an apply or a command runs before it gives up meeting concurrent ones.
    public static let maximumAttempts = 30

    /// Runs `work` in a serializable transaction that `work` ends (a ``SQLDeltaStore`` commits
    /// or rolls it back), again from the start — after a short random pause that grows — while
    /// the database could not order it with concurrent transactions. The commit may be shared
    /// with other applies (``SQLStorage/groupedWrite(_:)``): answer nobody before the returned
    /// ``PendingCommit`` says the changes are durable.
    ///
    /// - Throws: ``SQLError/Kind/unavailable`` after ``maximumAttempts`` attempts.
    private func inSerializableTransaction<Result>(_ work: (any SQLConnection) throws -> Result) throws -> (Result, PendingCommit) {
        for attempt in 1...Self.maximumAttempts {
            do {
                return try storage.groupedWrite { connection in
                    try connection.beginSerializable()
                    do {
                        return try work(connection)
                    } catch {
                        try? connection.rollback()   // when `work` left the transaction open
                        if connection.mustRetryTransaction { throw RetryTransaction() }
                        throw error
                    }
                }
            } catch is RetryTransaction {
                Thread.sleep(forTimeInterval: Double.random(in: 0.002...0.010) * Double(min(attempt, 10)))
            }
        }
        throw SQLError(.unavailable, "the work met concurrent changes of the same rows \(Self.maximumAttempts) times in a row; try again")
    }

    /// The transaction must run again from the start.
    private struct RetryTransaction: Error {}

    /// A request's deltas name each table once, and a delta each change id once: the answer
    /// maps back to the client's rows by table and change id, so anything else is refused whole
    /// before anything runs (a hand-made request sending one insert twice must not store it twice).
    static func checkShape(of deltas: [Delta]) throws {
        try EditReplay.checkEdits(of: deltas)
        var tables: Set<String> = []
        for delta in deltas {
            guard tables.insert(delta.tableName.lowercased()).inserted else {
                throw RelataError(.invalidDelta, "the request has two deltas for the table; send one delta per table", table: delta.tableName)
            }
            // Each id read in place; the one used twice is looked for only when there is one.
            guard delta.changeIds.count != delta.changes.count else { continue }
            var ids: Set<Int> = []
            for index in delta.changes.indices where !ids.insert(delta.changes[index].changeId).inserted {
                throw RelataError(.invalidDelta, "change id \(delta.changes[index].changeId) appears twice in the delta; each change has an id of its own",
                                  table: delta.tableName)
            }
        }
    }

    /// A delta's key and logged fields are fields of its table, and its key is the table's: a
    /// misspelt logged key would otherwise leave the key out of an insert, and the database would
    /// store the row under a key of its own choosing while the answer said the client's.
    static func checkFieldNames(of delta: Delta, in table: Relata.TableDefinition) throws {
        for name in delta.keyFields + delta.loggedFields where !table.fields.contains(where: { $0.name.equalsIgnoringCase(name) }) {
            throw RelataError(.invalidDelta, "the delta names a field '\(name)', which the table does not have", table: table.name, field: name)
        }
        let key = table.fields.filter(\.primaryKey).map { $0.name.lowercased() }
        guard delta.keyFields.isEmpty || delta.keyFields.map({ $0.lowercased() }) == key else {
            throw RelataError(.invalidDelta, "the delta's key fields are \(delta.keyFields.joined(separator: ", ")); the table's key is \(key.joined(separator: ", "))",
                              table: table.name)
        }
    }

    /// Fields marked ``Relata/FieldDefinition/serverAutoRefresh`` are read again from the database
    /// after the apply — what a trigger or a default there made of them — and always sent back.
    static func rereadingAutoRefreshFields(of deltas: [Delta], schema: SchemaDefinition, storage: SQLStorage,
                                           in connection: any SQLConnection) throws -> [Delta] {
        try deltas.map { delta in
            guard let definition = schema.table(named: delta.tableName), definition.fields.contains(where: \.serverAutoRefresh) else { return delta }
            let keyFields = definition.fields.filter(\.primaryKey)
            var keys: [Int: [Value]] = [:]
            for (index, change) in delta.changes.enumerated() where change.status == .resolved && change.type != .delete {
                keys[index] = keyFields.map { change.refreshedValues[$0.name] ?? change.newValues[$0.name] ?? .null }
            }
            let stored = try DataTable(name: definition.name, fields: definition.fields)
            try storage.loadRows(withKeys: Array(keys.values), into: stored, in: connection)
            var delta = delta
            for (index, key) in keys {
                guard let row = try stored.row(forPrimaryKey: key) else { continue }
                for field in definition.fields where field.serverAutoRefresh { delta.changes[index].refreshedValues[field.name] = row[field.name] }
            }
            return delta
        }
    }

    /// The client ends with what the server stored: every value of a resolved insert or update
    /// that differs from what the client sent (its expectation) — set by a server rule, a key the
    /// database gave, a value it normalised — joins the change's refreshed values, which the
    /// client folds into the row (``Relata/DataTable/accept(_:)``) as its value and original.
    static func sendingBackWhatDiffers(_ processed: [Delta], from sent: [Delta]) -> [Delta] {
        processed.map { delta in
            var delta = delta
            guard let sentDelta = sent.first(where: { $0.tableName.equalsIgnoringCase(delta.tableName) }) else { return delta }
            var positions = SentChangePositions(of: sentDelta)
            for index in delta.changes.indices {
                guard delta.changes[index].status == .resolved, delta.changes[index].type != .delete,
                      let position = positions.position(of: delta.changes[index].changeId, near: index) else { continue }
                let sentValues = sentDelta.changes[position].newValues
                let newValues = delta.changes[index].newValues
                // Values the replay made as sent are the sent values themselves: equal at once.
                if newValues == sentValues { continue }
                let refreshed = delta.changes[index].refreshedValues
                for (field, value) in newValues where (refreshed.isEmpty || refreshed[field] == nil) && sentValues[field] != value {
                    delta.changes[index].refreshedValues[field] = value
                }
            }
            return delta
        }
    }

    /// Runs a command the schema declares, as the caller, in one serializable transaction (run again
    /// when the database cannot order it with concurrent ones, as ``updateData(_:session:apply:rulesVersion:)``): its function runs
    /// with the parameters; what it changed through `lda` is then applied like an UpdateData
    /// (delta and transaction events, update rules, the store), all or nothing per the rules.
    ///
    /// - Returns: what the function returned, and the deltas of what it changed.
    /// - Throws: ``RelataError/Code/unknownCommand`` for a command the schema does not declare,
    ///   ``RelataError/Code/permissionDenied`` for a disabled command or a session without its
    ///   roles; a `fail()`'s ``ScriptError``.
    public func executeCommand(_ name: String, parameters: [String: Value], session: Session) async throws -> (result: Value, deltas: [Delta]) {
        let version = rules.value
        let schema = version.schema
        guard let command = schema.commands.first(where: { $0.name.equalsIgnoringCase(name) }) else {
            throw RelataError(.unknownCommand, "the schema \(schema.name) declares no command '\(name)' (commands: \(schema.commands.map(\.name).joined(separator: ", ")))")
        }
        guard command.enabled else { throw RelataError(.permissionDenied, "the command \(command.name) is not enabled") }
        guard command.roles.isEmpty || command.roles.contains(where: session.roles.contains) else {
            throw RelataError(.permissionDenied, "the command \(command.name) is for roles [\(command.roles.joined(separator: ", "))]")
        }
        let storage = self.storage, hidden = loginTable
        let (outcome, commit) = try await version.pool.perform { runtime in
            try self.inSerializableTransaction { connection in
                let data = SQLDataAccess(storage: storage, schema: schema, connection: connection, runtime: runtime)
                return try runtime.withUnitEnvironment(RuleEnvironment(session: session, isServer: true, dataAccess: data)) {
                    data.tables.startRecordingChanges()
                    let result = try runtime.runCommand(command, parameters: parameters)
                    var carried = UnitOfWorkChanges()
                    let deltas = try data.tables.deltasOfRecordedChanges(notIn: &carried)
                    let processed = try Self.processor(for: schema, runtime: runtime)
                        .process(deltas, store: SQLDeltaStore(storage: storage, connection: connection, access: data))
                    if connection.mustRetryTransaction { throw RetryTransaction() }
                    return (result, hidden?.hidingPassword(in: processed) ?? processed)
                }
            }
        }
        try await commit.durable()
        return outcome
    }

    /// Lets the schema's `afterLogin(login)` shape a new session (add values and roles).
    ///
    /// - Throws: the ``ScriptError`` of a `fail()` that refuses the login, or of a broken rule.
    public func afterLogin(user: String, session: Session) async throws -> Session {
        try await rules.value.pool.perform { runtime in
            try runtime.withUnitEnvironment(RuleEnvironment(session: session, isServer: true)) {
                try runtime.afterLogin(user: user, session: session)
            }
        }
    }

    /// The stored rows a table holds now, as values (tests and tools read them this way).
    public func storedRows(of name: String) throws -> [[String: Value]] {
        try storage.read { connection in
            let table = try storage.loadTable(name, in: connection)
            return table.rows.map { row in Dictionary(uniqueKeysWithValues: table.fields.map { ($0.name, row[$0.name]) }) }
        }
    }

    /// The schema's update order and rules over a runtime.
    private static func processor(for schema: SchemaDefinition, runtime: RuleRuntime) -> DeltaProcessor {
        DeltaProcessor(runtime: runtime, updateOrder: schema.updateOrder,
                       updateRules: Dictionary(schema.tables.map { ($0.name, $0.updateRule) }, uniquingKeysWith: { first, _ in first }))
    }

    /// The original keys of a delta's updates and deletes: the stored rows to load.
    private static func storedKeys(of delta: Delta, in table: DataTable) -> [[Value]] {
        let keyFields = table.primaryKeyFields
        var originals = FieldValueReader(names: keyFields.map(\.name))   // each list of names learnt once, not each name looked up
        var keys: [[Value]] = []
        keys.reserveCapacity(delta.changes.count)
        for index in delta.changes.indices where delta.changes[index].type != .insert {   // read in place, not copied
            originals.load(delta.changes[index].oldValues)
            let key = keyFields.indices.compactMap { position in originals[position].flatMap { try? keyFields[position].coerced($0) } }
            if key.count == keyFields.count { keys.append(key) }
        }
        return keys
    }
}

/// One version of a schema's rules: the schema, and a pool of runtimes that compiled its scripts.
final class RulesVersion: Sendable {
    let schema: SchemaDefinition
    /// What clients receive of it: no server-only scripts.
    let sharedSchema: SchemaDefinition
    /// `schema.version`, computed once: it encodes the whole schema, scripts included.
    let version: String
    let pool: RuleRuntimePool
    /// The data events some script handles (a read skips borrowing a runtime for the others).
    let dataEvents: Set<RuleEvent>

    init(schema: SchemaDefinition, size: Int, timeLimit: Duration, logger: Logger) throws {
        self.schema = schema
        sharedSchema = schema.sharedWithClients
        version = schema.version
        var handled: Set<RuleEvent> = []
        pool = try RuleRuntimePool(size: size) {
            let runtime = try RuleRuntime(engine: ScriptEngine(timeLimit: timeLimit), logger: logger)
            try runtime.load(schema)
            handled = Set([RuleEvent.beforeGetData, .afterGetData].filter(runtime.handles))
            return runtime
        }
        dataEvents = handled
    }

    /// Whether two versions of a schema store the same tables (what a reload cannot change).
    static func sameTables(_ a: SchemaDefinition, _ b: SchemaDefinition) -> Bool {
        func shape(_ schema: SchemaDefinition) -> [String] {
            schema.tables.map { table in
                "\(table.name)|\(table.physicalName)|\(table.fields)|\(table.columns.sorted { $0.key < $1.key })|\(table.foreignKeys)"
            }
        }
        return shape(a) == shape(b)
    }

    /// The version being served; swapped whole, so a request sees one version from start to end.
    final class Current: @unchecked Sendable {
        // @unchecked Sendable: `stored` is read and written only while `lock` is held.
        private let lock = NSLock()
        private var stored: RulesVersion

        init(_ version: RulesVersion) { stored = version }

        var value: RulesVersion {
            get { lock.withLock { stored } }
            set { lock.withLock { stored = newValue } }
        }
    }
}

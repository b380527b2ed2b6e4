import Foundation
import Relata
import RelataScript

extension DataService {
    /// A read that passed its checks and `beforeGetData`: what ``stream(_:emit:)`` sends.
    package struct CheckedRead: Sendable {
        let requests: [DataRequest]
        let reads: [Read]
        let session: Session
        let rules: RulesVersion
    }

    /// One request, checked: a table's rows (filtered by a where expression or not), or a DA SQL query's answer.
    enum Read: Sendable {
        case table(Relata.Expression?)
        case query(DASQLQuery, ResolvedQuery)
    }

    /// Reads tables as the caller: for each request its fields, the rows its where expression
    /// selects (evaluated as on every site; SQL only narrows what is read), at most
    /// `maxRecords` of them. `beforeGetData` runs first (a `fail()` refuses the read) and
    /// `afterGetData` after, with `isServer` true and the caller's session.
    ///
    /// The data server streams the same read (``stream(_:emit:)``); this form collects it.
    ///
    /// ```swift
    /// let tables = try await service.getData([DataRequest(table: "Orders", where: "Total > :min", parameters: ["min": 100])], session: session)
    /// ```
    /// - Throws: ``RelataError`` naming what was refused — a table the schema does not
    ///   publish, an unknown field, an expression that does not parse or names an unknown
    ///   field, a negative `maxRecords` — before anything is read; a rule's ``ScriptError``.
    public func getData(_ requests: [DataRequest], session: Session) async throws -> [TableData] {
        let read = try await checkRead(requests, session: session)
        let collected = Collected()
        try await stream(read) { event in collected.add(event) }
        return collected.tables
    }

    /// Checks a read — tables, fields, expressions, permissions — and runs `beforeGetData`;
    /// nothing is sent yet, so a refusal is still a plain error answer.
    package func checkRead(_ requests: [DataRequest], session: Session) async throws -> CheckedRead {
        let storage = self.storage
        var requests = requests
        let reads = try requests.indices.map { index -> Read in
            let request = requests[index]
            if let sql = request.sql { return try checkQuery(sql, of: request, session: session) }
            let definition = try storage.definition(of: request.table)
            try permissions.check(.read, on: definition.name, for: session)
            if let secrets = loginTable, secrets.isTable(definition.name) {
                if request.fields?.contains(where: { secrets.isPassword($0, of: definition.name) }) == true { throw secrets.passwordRefusal("the field list") }
                // Every field but the password, when the request names none.
                if request.fields == nil { requests[index].fields = definition.fields.map(\.name).filter { !secrets.isPassword($0, of: definition.name) } }
            }
            let names = Set(definition.fields.map { $0.name.lowercased() })
            if request.fields?.isEmpty == true {
                throw RelataError(.invalidArgument, "the field list is empty; name at least one field, or leave the list out for all", table: definition.name)
            }
            for field in request.fields ?? [] where !names.contains(field.lowercased()) {
                throw RelataError(.unknownField, "the table has no field '\(field)'", table: definition.name, field: field)
            }
            if let maxRecords = request.maxRecords, maxRecords < 0 {
                throw RelataError(.invalidArgument, "maxRecords is \(maxRecords); it cannot be negative", table: definition.name)
            }
            guard let text = request.where else { return .table(nil) }
            let expression = try expressions.parse(text)
            let known = names.union(definition.lookupFields.map { $0.name.lowercased() }).union(definition.calculatedFields.map { $0.name.lowercased() })
            if let unknown = expression.fieldNames.first(where: { !known.contains($0.lowercased()) }) {
                throw RelataError(.unknownField, "the where expression names '\(unknown)', which the table does not have", table: definition.name, field: unknown)
            }
            if let secrets = loginTable, expression.fieldNames.contains(where: { secrets.isPassword($0, of: definition.name) }) {
                throw secrets.passwordRefusal("the where expression")
            }
            try checkLookups(in: expression, of: definition, session: session)
            return .table(expression)
        }
        let rules = self.rules.value
        try await fire(.beforeGetData, requests: requests, session: session, rules: rules)
        return CheckedRead(requests: requests, reads: reads, session: session, rules: rules)
    }

    /// A filter on a lookup field reads its lookup table (a search on it recovers its values one
    /// question at a time): the caller needs read permission there too, and on every table a
    /// chain of lookups passes through.
    private func checkLookups(in expression: Relata.Expression, of definition: Relata.TableDefinition, session: Session) throws {
        for name in Set(expression.fieldNames.map { $0.lowercased() }) {
            var table = definition
            var field = name
            var visited: Set<String> = []
            while let lookup = table.lookupFields.first(where: { $0.name.lowercased() == field }), visited.insert("\(table.name.lowercased()).\(field)").inserted {
                let source = try storage.definition(of: lookup.lookupTable)
                if let secrets = loginTable, secrets.isPassword(lookup.lookupResultField, of: source.name) {
                    throw secrets.passwordRefusal("the where expression's lookup \(lookup.name)")
                }
                guard permissions.allows(.read, on: source.name, for: session) else {
                    let denied = permissions.refusal(.read, on: source.name, for: session)
                    throw RelataError(.permissionDenied, "the where expression names \(lookup.name), a lookup into \(source.name): \(denied.message)",
                                      table: definition.name, field: lookup.name)
                }
                table = source
                field = lookup.lookupResultField.lowercased()
            }
        }
    }

    /// Checks a DA SQL request: it parses, every table and field it names is published, and
    /// the caller may read every table it reads (in subqueries too).
    private func checkQuery(_ sql: String, of request: DataRequest, session: Session) throws -> Read {
        if request.fields != nil || request.where != nil {
            throw RelataError(.invalidArgument, "a DA SQL request takes no field list or where expression; write them in the query", table: request.table)
        }
        if let maxRecords = request.maxRecords, maxRecords < 0 {
            throw RelataError(.invalidArgument, "maxRecords is \(maxRecords); it cannot be negative", table: request.table)
        }
        let query = try DASQLQuery(sql)
        // The login table's password is not there to be named (nor in a `*`).
        let secrets = loginTable
        let catalog = QueryCatalog(storage.schema.tables.map { table in
            QueryCatalog.Table(name: table.name, fields: table.fields.filter { secrets?.isPassword($0.name, of: table.name) != true })
        })
        let resolved = try query.resolved(in: catalog, parameters: request.parameters)
        for name in query.tableNames {
            try permissions.check(.read, on: try storage.definition(of: name).name, for: session)
        }
        return .query(query, resolved)
    }

    /// Sends a checked read as events — each table, its rows in batches, its end — then runs
    /// `afterGetData`. Each request reads in a transaction of its own on a reader connection,
    /// beside the writer. `emit` runs on the reading thread and may block (it is how a slow
    /// receiver holds the read back); what it throws stops the read.
    ///
    /// A where expression that names a calculated field needs a rule runtime: that read is
    /// computed whole first and sent after, so no runtime (nor its reader) waits for a slow
    /// receiver. `limit` bounds computing (a query, a filter), not the time `emit` waits; it
    /// defaults to the service's query time limit.
    package func stream(_ read: CheckedRead, limit: WorkLimit? = nil, emit: @escaping @Sendable (RowStreamEvent) throws -> Void) async throws {
        let storage = self.storage
        let schema = read.rules.schema
        let limit = limit ?? WorkLimit(timeLimit: queryTimeLimit)
        let emit: @Sendable (RowStreamEvent) throws -> Void = { event in try limit.excluding { try emit(event) } }
        for (request, checked) in zip(read.requests, read.reads) {
            // Only cancellation here: a plain read's time is the database's, and the client's pace.
            if limit.isCancelled { throw CancellationError() }
            let expression: Relata.Expression?
            switch checked {
            case .table(let filter): expression = filter
            case .query(let query, let resolved):
                let reader = QueryReader(storage: storage, workLimit: limit)
                let queued = ContinuousClock.now
                _ = try await storage.asyncRead { connection in
                    limit.notCounting(since: queued)
                    return try reader.read(request, query: query, resolved: resolved, in: connection, emit: emit)
                }
                continue
            }
            let definition = try storage.definition(of: request.table)
            let calculated = Set(definition.calculatedFields.map { $0.name.lowercased() })
            if let expression, expression.fieldNames.contains(where: { calculated.contains($0.lowercased()) }) {
                let session = read.session
                let queued = ContinuousClock.now
                let computed = try await read.rules.pool.perform { runtime in
                    try storage.read { connection in
                        limit.notCounting(since: queued)
                        let data = SQLDataAccess(storage: storage, schema: schema, connection: connection, runtime: runtime)
                        // A calculated field reads other tables through `lda` as the caller, not with the server's authority.
                        data.readCheck = { [permissions, loginTable] table in
                            try permissions.check(.read, on: table, for: session)
                            if let loginTable, loginTable.isTable(table) { throw loginTable.passwordRefusal("a read through lda of \(table) for a filter") }
                        }
                        return try runtime.withUnitEnvironment(RuleEnvironment(session: session, isServer: true, dataAccess: data)) {
                            var events: [RowStreamEvent] = []
                            try TableReader(storage: storage, data: data, workLimit: limit)
                                .read(request, expression: expression, in: connection) { events.append($0) }
                            return events
                        }
                    }
                }
                // Sending may wait for the receiver: on a thread of its own, not the cooperative pool.
                try await OffCooperativePool.run { for event in computed { try emit(event) } }
            } else {
                let queued = ContinuousClock.now
                try await storage.asyncRead { connection in
                    limit.notCounting(since: queued)
                    let data = SQLDataAccess(storage: storage, schema: schema, connection: connection, runtime: nil)
                    try TableReader(storage: storage, data: data, workLimit: limit).read(request, expression: expression, in: connection, emit: emit)
                }
            }
        }
        try await fire(.afterGetData, requests: read.requests, session: read.session, rules: read.rules)
    }

    /// Fires a data event on a runtime of `rules`, unless no script handles it.
    private func fire(_ event: RuleEvent, requests: [DataRequest], session: Session, rules: RulesVersion) async throws {
        guard rules.dataEvents.contains(event) else { return }
        let storage = self.storage
        try await rules.pool.perform { runtime in
            try storage.read { connection in
                let data = SQLDataAccess(storage: storage, schema: rules.schema, connection: connection, runtime: runtime)
                try runtime.withUnitEnvironment(RuleEnvironment(session: session, isServer: true, dataAccess: data)) {
                    try runtime.fireDataEvent(event, requests: requests)
                }
            }
        }
    }

    /// The tables of a read, collected from its events.
    private final class Collected: @unchecked Sendable {
        // @unchecked Sendable: `stream` calls `emit` from one reading thread at a time, in order,
        // and `tables` is read only after `stream` returned.
        private(set) var tables: [TableData] = []

        func add(_ event: RowStreamEvent) {
            switch event {
            case .table(let name, let fields, _): tables.append(TableData(name: name, fields: fields, rows: []))
            case .rows(let rows):
                tables[tables.count - 1].rows += (0..<rows.count).map(rows.values(ofRow:))
            case .schema, .tableEnd, .end, .error: break
            }
        }
    }
}

import Foundation
import Relata

/// Working offline: the adapter's tables, pending changes and rules in a briefcase.
extension RemoteDataAdapter {
    /// The briefcase properties the adapter writes (its own; an app adds its others).
    public enum BriefcaseKey {
        /// The schema with its rule scripts, as JSON.
        public static let schema = "Relata.Schema"
        /// The version of the schema and scripts.
        public static let rulesVersion = "Relata.RulesVersion"
        /// The tables fetched from the server, by name, one per line.
        public static let fetchedTables = "Relata.FetchedTables"
        /// The batch sent whose answer never came (``RemoteDataAdapter/unansweredApply``), as its
        /// UpdateData request: its apply id and deltas.
        public static let unansweredApply = "Relata.UnansweredApply"
    }

    /// A briefcase of the adapter's fetched tables, pending changes included, with the rules
    /// they were checked with and the batch whose answer never came (``unansweredApply``, with its
    /// apply id) — everything ``load(_:)`` needs to go on offline and apply nothing twice.
    ///
    /// ```swift
    /// let briefcase = try adapter.makeBriefcase()
    /// briefcase.properties["MyApp.DataVersion"] = "3"
    /// try briefcase.save(to: briefcaseURL)
    /// ```
    /// - Throws: ``RelataError/Code/invalidArgument`` before the schema is downloaded.
    public func makeBriefcase() throws -> Briefcase {
        guard let rules else {
            throw RelataError(.invalidArgument, "the adapter has no schema yet: fetch a table (or call loadSchema) before saving a briefcase")
        }
        let briefcase = Briefcase()
        let fetched = rules.adapter.tables.filter { rules.fetched.contains($0.name.lowercased()) }
        for table in fetched { briefcase.addTable(table) }
        briefcase.properties[BriefcaseKey.schema] = String(decoding: try JSONEncoder().encode(rules.schema), as: UTF8.self)
        briefcase.properties[BriefcaseKey.rulesVersion] = rules.version
        briefcase.properties[BriefcaseKey.fetchedTables] = fetched.map(\.name).joined(separator: "\n")
        if let unansweredApply { briefcase.properties[BriefcaseKey.unansweredApply] = String(decoding: try unansweredApply.body(), as: UTF8.self) }
        return briefcase
    }

    /// Takes the tables and rules of a briefcase ``makeBriefcase()`` made: the tables come back with
    /// their pending changes, the rules run on them as before, and applying later sends the changes
    /// (the server tells the adapter if its rules changed meanwhile).
    ///
    /// ```swift
    /// let adapter = RemoteDataAdapter(targetURL: serverURL)
    /// try adapter.load(Briefcase(contentsOf: briefcaseURL))
    /// let orders = adapter.table(named: "Orders")!   // as saved, pending changes included
    /// ```
    /// - Throws: ``RelataError/Code/invalidArgument`` when the adapter already has tables, or the
    ///   briefcase holds no rules; ``RelataError/Code/invalidBriefcase`` when they cannot be read;
    ///   the errors of tables that do not fit the schema.
    public func load(_ briefcase: Briefcase) throws {
        guard rules == nil else {
            throw RelataError(.invalidArgument, "the adapter has its tables already; load a briefcase into a new adapter")
        }
        guard let json = briefcase.properties[BriefcaseKey.schema], let version = briefcase.properties[BriefcaseKey.rulesVersion] else {
            throw RelataError(.invalidArgument, "the briefcase holds no rules (it was not made by RemoteDataAdapter.makeBriefcase)")
        }
        let schema: SchemaDefinition
        do {
            schema = try JSONDecoder().decode(SchemaDefinition.self, from: Data(json.utf8))
        } catch {
            throw RelataError(.invalidBriefcase, "the briefcase's schema cannot be read: \(error)")
        }
        let names = (briefcase.properties[BriefcaseKey.fetchedTables] ?? "").split(separator: "\n").map(String.init)
        let tables = names.compactMap { briefcase.table(named: $0) }
        var waiting: UnansweredApply?
        if let request = briefcase.properties[BriefcaseKey.unansweredApply] {
            let read: (apply: ApplyId?, deltas: [Delta])
            do {
                read = try DeltaJSON.decodeRequest(Array(request.utf8))
            } catch {
                throw RelataError(.invalidBriefcase, "the briefcase's unanswered apply cannot be read: \(error)")
            }
            guard let apply = read.apply else { throw RelataError(.invalidBriefcase, "the briefcase's unanswered apply has no apply id") }
            waiting = UnansweredApply(apply: apply, deltas: read.deltas)
        }
        let loaded = install(try LoadedRules(schema: schema, version: version, tables: tables, logger: logger))
        loaded.fetched = Set(tables.map { $0.name.lowercased() })
        if let waiting {
            // Its rows stay locked until its answer comes, as they were when the briefcase was made.
            for delta in waiting.deltas { try ownTable(named: delta.tableName).lockRows(of: delta) }
            unansweredApply = waiting
        }
    }
}

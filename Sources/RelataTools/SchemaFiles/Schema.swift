import Foundation
import Logging
import Relata
import RelataScript

/// A schema file read from disk: its ``SchemaDescription`` and where it lives,
/// so the data, scripts and tests it names can be found.
///
/// ```swift
/// let schema = try Schema(contentsOf: URL(fileURLWithPath: "Examples/PCTrade/PCTrade.schema.json"))
/// let adapter = try schema.makeAdapter()
/// let orders = adapter.table(named: "Orders")!
/// ```
public struct Schema: Sendable {
    public let description: SchemaDescription
    /// The schema file.
    public let url: URL

    /// Reads and checks a schema file.
    ///
    /// - Throws: ``RelataError/Code/invalidSchema`` naming the file and the place in it:
    ///   malformed JSON, a missing or mistyped entry, an unknown data type, duplicate
    ///   table names, or a table named in `updateOrder` or a relationship that does not exist.
    public init(contentsOf url: URL) throws {
        try self.init(JSONFile.decode(SchemaDescription.self, from: url, what: "schema file", keys: .schema), url: url)
    }

    /// A schema from the JSON text of a schema file; relative paths in it are resolved beside `url`,
    /// which errors name as the file.
    ///
    /// ```swift
    /// let schema = try Schema(json: Data(text.utf8), url: URL(fileURLWithPath: "Shop/Shop.schema.json"))
    /// ```
    public init(json: Data, url: URL) throws {
        try self.init(JSONFile.decode(SchemaDescription.self, from: json, name: url.path, what: "schema file", keys: .schema), url: url)
    }

    /// A schema from a description; relative paths in it are resolved beside `url`.
    public init(_ description: SchemaDescription, url: URL) throws {
        self.description = description
        self.url = url
        try check()
    }

    /// A path from the schema file, resolved against the schema file's folder.
    public func resolve(_ path: String) -> URL {
        path.hasPrefix("/") ? URL(fileURLWithPath: path) : url.deletingLastPathComponent().appendingPathComponent(path)
    }

    /// Every rule script the schema names: the schema-wide ones first, then the tables' in order
    /// (each shared, then server-only).
    public var scriptFiles: [URL] {
        ([description.script, description.serverScript] + description.tables.flatMap { [$0.script, $0.serverScript] }).compactMap { $0 }.map(resolve)
    }

    /// The rule test files the schema names (`tests`): files as given, folders searched for `*.test.js`.
    public func testFiles() throws -> [URL] {
        try (description.tests ?? []).flatMap { entry -> [URL] in
            let url = resolve(entry)
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else {
                throw RelataError(.fileFailed, "tests: '\(entry)' does not exist (looked for \(url.path))", location: self.url.path)
            }
            guard isFolder.boolValue else { return [url] }
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: url.path) else {
                throw RelataError(.fileFailed, "tests: the folder '\(entry)' cannot be read", location: url.path)
            }
            return names.filter { $0.hasSuffix(".test.js") }.sorted().map { url.appendingPathComponent($0) }
        }
    }

    /// A ``LocalDataAdapter`` holding the schema's tables with their data, scripts,
    /// relationships, lookup and calculated fields, update rules and update order.
    /// Each call makes a fresh adapter from the files, so tests can start clean.
    /// With `coverage`, the adapter's scripts record which handlers and `fail()`
    /// calls run (see ``RuleCoverage``).
    public func makeAdapter(engine: ScriptEngine? = nil, logger: Logger = Logger(label: "relata.rules"),
                            coverage: RuleCoverage? = nil) throws -> LocalDataAdapter {
        let adapter = try LocalDataAdapter(engine: engine, logger: logger)
        adapter.coverage = coverage
        try load(into: adapter)
        adapter.session = try defaultSession()
        return adapter
    }

    /// The session the schema file gives offline rules (`session`); an empty one without it.
    ///
    /// - Throws: ``RelataError`` naming the schema file for a value that is not a field value.
    public func defaultSession() throws -> Session {
        do {
            return try description.session?.session() ?? Session()
        } catch let error as RelataError {
            throw RelataError(error.code, "session: \(error.message)", location: url.path)
        }
    }

    /// Adds the schema's tables and rules to an adapter.
    ///
    /// - Throws: the ``RelataError`` of a relationship, lookup or calculated field the
    ///   tables cannot have (naming the schema file), or a script's ``ScriptError``.
    public func load(into adapter: LocalDataAdapter) throws {
        do {
            try adapter.load(definition(), tables: description.tables.map(makeTable))
        } catch var error as RelataError where error.location == nil {
            error.location = url.path
            throw error
        }
    }

    /// The schema as every site shares it: the same tables and relationships, with the
    /// scripts' text read from their files (named by their paths relative to the schema file).
    ///
    /// - Throws: ``RelataError/Code/fileFailed`` naming a script that cannot be read.
    public func definition() throws -> SchemaDefinition {
        func script(_ path: String?) throws -> RuleScript? {
            try path.map { try RuleScript(contentsOf: resolve($0), name: $0) }
        }
        return try SchemaDefinition(name: description.name, tables: description.tables.map { table in
            TableDefinition(name: table.name, fields: table.fields, script: try script(table.script),
                            updateRule: UpdateRule(onFailure: table.updateRule ?? .applyOthers),
                            foreignKeys: table.foreignKeys ?? [], lookupFields: table.lookupFields ?? [],
                            calculatedFields: table.calculatedFields ?? [], storedName: table.storedName, columns: table.columns ?? [:],
                            serverScript: try script(table.serverScript))
        }, script: script(description.script), updateOrder: description.updateOrder, commands: description.commands ?? [],
           serverScript: script(description.serverScript))
    }

    /// The schema's tables holding the rows of their data files (empty for a table without
    /// one), with no rules: what a data server seeds its database with.
    ///
    /// - Throws: the ``RelataError`` of a data file that cannot be read or does not fit its table.
    public func dataTables() throws -> [DataTable] {
        do {
            return try description.tables.map(makeTable)
        } catch var error as RelataError where error.location == nil {
            error.location = url.path
            throw error
        }
    }

    private func makeTable(_ table: SchemaDescription.Table) throws -> DataTable {
        // The fields first, so an error in them names the schema file rather than the data file.
        _ = try DataTable(name: table.name, fields: table.fields)
        guard let data = table.data else { return try DataTable(name: table.name, fields: table.fields) }
        let file = resolve(data)
        do {
            if file.pathExtension.lowercased() == "json" {
                return try DataTable(name: table.name, fields: table.fields, json: InputFile.data(at: file, what: "data file"))
            }
            return try DataTable(name: table.name, fields: table.fields, csv: InputFile.text(at: file, what: "data file"))
        } catch var error as RelataError where error.code != .fileFailed {
            error.location = [data, error.location].compactMap { $0 }.joined(separator: ", ")
            throw error
        }
    }

    private func check() throws {
        func invalid(_ message: String) -> RelataError { RelataError(.invalidSchema, message, location: url.path) }
        // The tables and relationships are checked as a schema definition is (without reading the scripts).
        do {
            _ = try SchemaDefinition(name: description.name, tables: description.tables.map { table in
                TableDefinition(name: table.name, fields: table.fields, foreignKeys: table.foreignKeys ?? [],
                                lookupFields: table.lookupFields ?? [], storedName: table.storedName, columns: table.columns ?? [:])
            }, updateOrder: description.updateOrder)
        } catch var error as RelataError {
            error.location = url.path
            throw error
        }
        for path in [description.script] + description.tables.flatMap({ [$0.script, $0.data] }) {
            guard let path else { continue }
            if !FileManager.default.fileExists(atPath: resolve(path).path) {
                throw invalid("'\(path)' does not exist (looked for \(resolve(path).path))")
            }
        }
    }
}

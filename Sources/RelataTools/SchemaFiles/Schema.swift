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

    /// Every rule script the schema names: the schema-wide one first, then the tables' in order.
    public var scriptFiles: [URL] {
        ([description.script] + description.tables.map(\.script)).compactMap { $0 }.map(resolve)
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
        return adapter
    }

    /// Adds the schema's tables and rules to an adapter.
    ///
    /// - Throws: the ``RelataError`` of a relationship, lookup or calculated field the
    ///   tables cannot have (naming the schema file), or a script's ``ScriptError``.
    public func load(into adapter: LocalDataAdapter) throws {
        do {
            try loadTables(into: adapter)
        } catch var error as RelataError where error.location == nil {
            error.location = url.path
            throw error
        }
    }

    private func loadTables(into adapter: LocalDataAdapter) throws {
        for table in description.tables {
            try adapter.addTable(makeTable(table))
            if let rule = table.updateRule { adapter.setUpdateRule(UpdateRule(onFailure: rule), forTable: table.name) }
        }
        for table in description.tables {
            let created = adapter.table(named: table.name)!
            for key in table.foreignKeys ?? [] {
                try created.addForeignKey(key.field, references: adapter.table(named: key.references)!, field: key.referencedField)
            }
            for lookup in table.lookupFields ?? [] {
                try created.addLookupField(name: lookup.name, sourceField: lookup.sourceField,
                                           lookupTable: adapter.table(named: lookup.lookupTable)!,
                                           lookupKeyField: lookup.lookupKeyField, lookupResultField: lookup.lookupResultField)
            }
        }
        if let script = description.script { try adapter.setSchemaScript(RuleScript(contentsOf: resolve(script), name: script)) }
        // (A script file that cannot be read is a RelataError naming its path.)
        for table in description.tables {
            if let script = table.script { try adapter.setScript(RuleScript(contentsOf: resolve(script), name: script), forTable: table.name) }
            for field in table.calculatedFields ?? [] {
                try adapter.addCalculatedField(name: field.name, type: field.type, cached: field.cached ?? false,
                                               table: table.name, function: field.function)
            }
        }
        adapter.updateOrder = description.updateOrder ?? description.tables.map(\.name)
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
        var names: Set<String> = []
        for table in description.tables where !names.insert(table.name.lowercased()).inserted {
            throw invalid("the table \(table.name) is described twice")
        }
        func requireTable(_ name: String, _ context: String) throws {
            guard names.contains(name.lowercased()) else {
                throw invalid("\(context) names the table '\(name)', which the schema does not describe (tables: \(description.tables.map(\.name).joined(separator: ", ")))")
            }
        }
        for name in description.updateOrder ?? [] { try requireTable(name, "updateOrder") }
        for table in description.tables {
            for key in table.foreignKeys ?? [] { try requireTable(key.references, "\(table.name).foreignKeys") }
            for lookup in table.lookupFields ?? [] { try requireTable(lookup.lookupTable, "\(table.name).lookupFields") }
        }
        for path in [description.script] + description.tables.flatMap({ [$0.script, $0.data] }) {
            guard let path else { continue }
            if !FileManager.default.fileExists(atPath: resolve(path).path) {
                throw invalid("'\(path)' does not exist (looked for \(resolve(path).path))")
            }
        }
    }
}

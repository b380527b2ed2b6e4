import Foundation

/// Tables saved to disk together with their pending changes, so an app can
/// close with unsent edits and apply them tomorrow.
///
/// A briefcase keeps, for each table, its field definitions, its original
/// values and every row's change: row states, pending values, the edit buffer
/// of a row in edit mode, the failure message of a change the data source
/// rejected, change ids, and the temporary negative keys of added rows (so
/// new rows that refer to each other still do). Calculated and lookup fields,
/// indexes, observers and rules are code: add them again after loading.
///
/// ```swift
/// let briefcase = Briefcase()
/// briefcase.addTable(orders)
/// briefcase.properties["DataVersion"] = "0.1"
/// try briefcase.save(to: url)
///
/// // Tomorrow:
/// let saved = try Briefcase(contentsOf: url)
/// if saved.properties["DataVersion"] == "0.1", let orders = saved.table(named: "Orders") {
///     try adapter.applyChanges(for: orders)
/// }
/// ```
///
/// Saving is crash-safe: a save interrupted at any point (the process killed,
/// the machine off) leaves the previous briefcase or the new one, never a
/// broken file. Two layouts (see ``Layout``): one file, or a folder with one
/// file per table, so one table can be saved or loaded alone.
public final class Briefcase {
    /// How a briefcase lies on disk.
    public enum Layout: Sendable {
        /// One file holding every table: simple to copy, mail, or keep beside a document.
        case file
        /// A folder with a manifest and one file per table: saving one table rewrites
        /// only that table's file, and one table can be loaded without reading the others.
        case folder
    }

    /// The tables, in the order they were added.
    public private(set) var tables: [DataTable] = []
    /// String properties saved with the tables, such as a data-version key.
    public var properties: [String: String] = [:]

    public init() {}

    /// Loads a briefcase saved by ``save(to:layout:)``, a file or a folder.
    ///
    /// - Throws: ``RelataError/Code/invalidBriefcase`` for a file that is not a
    ///   briefcase, is damaged or cut short, or comes from a newer format version;
    ///   ``RelataError/Code/fileFailed`` when it cannot be read. Nothing is loaded then.
    public convenience init(contentsOf url: URL) throws {
        self.init()
        if Self.isFolder(url) {
            let manifest = try BriefcaseManifest.read(from: url)
            properties = manifest.properties
            tables = try manifest.entries.map { try BriefcaseManifest.readTable($0, in: url) }
        } else {
            (properties, tables) = try BriefcaseContainer.read(url, expecting: .briefcase, Self.readContents)
        }
    }

    /// Loads a single-file briefcase from its bytes (as ``save(to:layout:)`` writes them with the file layout),
    /// checked exactly as a file is.
    ///
    /// ```swift
    /// let briefcase = try Briefcase(data: receivedBytes)
    /// ```
    public convenience init(data: Data) throws {
        self.init()
        (properties, tables) = try data.withUnsafeBytes { bytes in
            try BriefcaseContainer.read(bytes, expecting: .briefcase, name: "briefcase data", Self.readContents)
        }
    }

    private static func readContents(_ reader: inout BinaryReader) throws -> ([String: String], [DataTable]) {
        let properties = try BriefcaseContainer.readProperties(from: &reader)
        var tables: [DataTable] = []
        for _ in 0..<(try reader.read(UInt32.self)) {
            let length = try reader.readCount("a table")
            var table = try reader.subreader(length: length)
            tables.append(try DataTable.readBriefcase(from: &table))
            try reader.skip(length)
        }
        return (properties, tables)
    }

    /// The names of the tables, in order.
    public var tableNames: [String] { tables.map(\.name) }

    /// Adds a table, replacing one of the same name (case-insensitively).
    public func addTable(_ table: DataTable) {
        if let index = position(of: table.name) { tables[index] = table } else { tables.append(table) }
    }

    /// The table with a name (case-insensitively), or nil.
    public func table(named name: String) -> DataTable? {
        position(of: name).map { tables[$0] }
    }

    /// Removes a table; returns it, or nil when there was none of that name.
    @discardableResult
    public func removeTable(named name: String) -> DataTable? {
        position(of: name).map { tables.remove(at: $0) }
    }

    /// Saves every table and the properties.
    ///
    /// For ``Layout/folder``, table files no longer in the briefcase are removed.
    /// - Throws: ``RelataError/Code/fileFailed`` when the file cannot be written;
    ///   the previous briefcase is then still there, untouched.
    public func save(to url: URL, layout: Layout = .file) throws {
        switch layout {
        case .file:
            let bytes = try BriefcaseContainer.make(.briefcase) { writer in
                BriefcaseContainer.write(properties, into: &writer)
                writer.write(UInt32(tables.count))
                for table in tables {
                    let length = writer.placeholder()
                    try table.writeBriefcase(into: &writer)
                    writer.patch(UInt64(writer.bytes.count - length - 8), at: length)
                }
            }
            try AtomicFile.write(bytes, to: url)
        case .folder:
            try BriefcaseManifest.save(tables: tables, only: nil, properties: properties, to: url)
        }
    }

    /// Saves some tables (and the properties) of a folder briefcase, leaving the
    /// other tables' files as they are. Tables the folder does not hold yet are
    /// written too; tables no longer in this briefcase are dropped from it.
    ///
    /// ```swift
    /// try briefcase.save(tables: ["Orders"], toFolder: folder)   // a million-row Products table is not rewritten
    /// ```
    public func save(tables names: [String], toFolder url: URL) throws {
        for name in names where position(of: name) == nil {
            throw RelataError(.unknownTable, "the briefcase has no such table (tables: \(tableNames.joined(separator: ", ")))", table: name)
        }
        try BriefcaseManifest.save(tables: tables, only: Set(names.map { $0.lowercased() }), properties: properties, to: url)
    }

    /// Loads one table of a briefcase without keeping the rest: from a folder,
    /// only that table's file is read.
    public static func loadTable(named name: String, from url: URL) throws -> DataTable {
        if isFolder(url) {
            let manifest = try BriefcaseManifest.read(from: url)
            guard let entry = manifest.entries.first(where: { $0.table.equalsIgnoringCase(name) }) else {
                throw RelataError(.unknownTable, "the briefcase has no such table (tables: \(manifest.entries.map(\.table).joined(separator: ", ")))",
                                  table: name, location: url.path)
            }
            return try BriefcaseManifest.readTable(entry, in: url)
        }
        let briefcase = try Briefcase(contentsOf: url)
        guard let table = briefcase.table(named: name) else {
            throw RelataError(.unknownTable, "the briefcase has no such table (tables: \(briefcase.tableNames.joined(separator: ", ")))",
                              table: name, location: url.path)
        }
        return table
    }

    private func position(of name: String) -> Int? {
        tables.firstIndex { $0.name.equalsIgnoringCase(name) }
    }

    /// How the briefcase at `url` lies on disk: a folder is ``Layout/folder``, anything else ``Layout/file``.
    public static func layout(of url: URL) -> Layout {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue ? .folder : .file
    }

    static func isFolder(_ url: URL) -> Bool { layout(of: url) == .folder }

    /// Whether a briefcase is at `url` — a file, or a folder with its manifest — judged by the
    /// magic bytes its file starts with, without loading it.
    ///
    /// ```swift
    /// if FileManager.default.fileExists(atPath: path) && !Briefcase.isBriefcase(at: url) { /* not ours to replace */ }
    /// ```
    public static func isBriefcase(at url: URL) -> Bool {
        let file = isFolder(url) ? url.appendingPathComponent(BriefcaseManifest.fileName) : url
        guard let handle = try? FileHandle(forReadingFrom: file) else { return false }
        defer { try? handle.close() }
        return (try? handle.read(upToCount: BriefcaseFormat.magic.count)).map { Array($0) == BriefcaseFormat.magic } ?? false
    }
}


import Foundation

/// The folder layout of a briefcase: `manifest.briefcase` (the properties and
/// which file holds each table) and one file per table. A save writes the new
/// table files under new names, then replaces the manifest in one atomic
/// rename — the moment the new briefcase exists — and only then removes the
/// files the old manifest used. Readers follow the manifest, so they see the
/// old briefcase or the new one, whole.
enum BriefcaseManifest {
    static let fileName = "manifest.briefcase"

    struct Entry: Equatable {
        var table: String
        var file: String
    }

    struct Contents {
        var generation: UInt64
        var properties: [String: String]
        var entries: [Entry]
    }

    static func read(from folder: URL) throws -> Contents {
        let url = folder.appendingPathComponent(fileName)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw RelataError(.invalidBriefcase, "not a briefcase folder: it has no \(fileName)", location: folder.path)
        }
        return try BriefcaseContainer.read(url, expecting: .manifest) { reader in
            let generation = try reader.read(UInt64.self)
            let properties = try BriefcaseContainer.readProperties(from: &reader)
            var entries: [Entry] = []
            for _ in 0..<(try reader.read(UInt32.self)) {
                let entry = Entry(table: try reader.readString(), file: try reader.readString())
                guard !entry.file.contains("/"), entry.file.hasSuffix(".table") else {
                    throw BriefcaseFormat.damaged("the manifest names '\(entry.file)' as a table file")
                }
                entries.append(entry)
            }
            return Contents(generation: generation, properties: properties, entries: entries)
        }
    }

    static func readTable(_ entry: Entry, in folder: URL) throws -> DataTable {
        let url = folder.appendingPathComponent(entry.file)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw RelataError(.invalidBriefcase, "the manifest lists \(entry.file) for table \(entry.table), but the file is missing",
                              location: folder.path)
        }
        return try BriefcaseContainer.read(url, expecting: .table) { reader in
            try DataTable.readBriefcase(from: &reader)
        }
    }

    /// Saves `tables` (or, with `only`, just those named, by lower-cased name) and the properties.
    static func save(tables: [DataTable], only: Set<String>?, properties: [String: String], to folder: URL) throws {
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw RelataError(.fileFailed, "cannot create the briefcase folder (\(error.localizedDescription))", location: folder.path)
        }
        let existing = FileManager.default.fileExists(atPath: folder.appendingPathComponent(fileName).path) ? try read(from: folder) : nil
        let generation = (existing?.generation ?? 0) + 1
        var entries: [Entry] = []
        for (index, table) in tables.enumerated() {
            let previous = existing?.entries.first { $0.table.equalsIgnoringCase(table.name) }
            if let previous, let only, !only.contains(table.name.lowercased()) {
                entries.append(Entry(table: table.name, file: previous.file))
                continue
            }
            let bytes = try BriefcaseContainer.make(.table) { try table.writeBriefcase(into: &$0) }
            let file = "\(generation)-\(index + 1).table"
            try AtomicFile.write(bytes, to: folder.appendingPathComponent(file))
            entries.append(Entry(table: table.name, file: file))
        }
        let manifest = BriefcaseContainer.make(.manifest) { writer in
            writer.write(generation)
            BriefcaseContainer.write(properties, into: &writer)
            writer.write(UInt32(entries.count))
            for entry in entries {
                writer.write(entry.table)
                writer.write(entry.file)
            }
        }
        try AtomicFile.write(manifest, to: folder.appendingPathComponent(fileName))
        removeUnused(in: folder, keeping: Set(entries.map(\.file)))
    }

    /// Table files no manifest refers to (from earlier or interrupted saves), and leftover temporary files.
    private static func removeUnused(in folder: URL, keeping used: Set<String>) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        for name in names where (name.hasSuffix(".table") && !used.contains(name)) || (name.hasPrefix(".") && name.hasSuffix(".table.saving")) {
            try? FileManager.default.removeItem(at: folder.appendingPathComponent(name))
        }
    }
}

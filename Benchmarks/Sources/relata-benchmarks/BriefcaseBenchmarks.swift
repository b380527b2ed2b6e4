import Foundation
import Relata

/// Saving and loading a briefcase of `count` rows (with pending changes), side by
/// side with writing and reading the same bytes as one plain file — the floor.
func runBriefcaseBenchmarks(count: Int) throws {
    print("Relata briefcase benchmarks — one table of \(count) rows × 6 fields, 1% of rows changed")
    let dataset = Dataset(count: count)
    let table = try DataTable(name: "Clients", fields: Dataset.fields)
    try table.loadRows(dataset.relataRows)
    try table.performBatchUpdates {
        let rows = table.rows
        for index in stride(from: 0, to: rows.count, by: 100) { try rows[index].setValue(.double(Double(index)), forKey: "Balance") }
        for index in stride(from: 50, to: rows.count, by: 1000) { try table.removeRow(rows[index]) }
        for index in 0..<(count / 1000) { try table.addNewRow(values: ["Id": .integer(Int64(count + index + 1)), "Name": .string("New \(index)")]) }
    }
    let briefcase = Briefcase()
    briefcase.addTable(table)
    briefcase.properties["DataVersion"] = "1"

    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("relata-briefcase-benchmark-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let url = folder.appendingPathComponent("clients.briefcase")
    let plain = folder.appendingPathComponent("plain.bytes")

    let save = try measure { try briefcase.save(to: url) }
    let bytes = try Data(contentsOf: url)
    let plainWrite = try measure { try bytes.write(to: plain) }
    let plainWriteSynced = try measure {
        try bytes.write(to: plain)
        let handle = try FileHandle(forWritingTo: plain)
        try handle.synchronize()
        try handle.close()
    }
    // Loaded briefcases are kept until the end, so freeing one is not timed as part of the next load.
    var loaded: [Briefcase] = []
    let load = try measure { loaded.append(try Briefcase(contentsOf: url)) }
    var read: [Data] = []
    let plainRead = try measure { read.append(try Data(contentsOf: plain)) }
    precondition(loaded.allSatisfy { $0.tables.first?.rowCount == table.rowCount }, "a loaded table differs")

    let folderURL = folder.appendingPathComponent("clients-folder.briefcase")
    let folderSave = try measure { try briefcase.save(to: folderURL, layout: .folder) }
    let folderLoad = try measure { loaded.append(try Briefcase(contentsOf: folderURL)) }

    print("")
    print("File: \(String(format: "%.1f", Double(bytes.count) / 1_048_576)) MiB (\(bytes.count / count) bytes per row)")
    print("")
    print("| operation | Relata | floor: the same bytes as a plain file | Relata ÷ floor |")
    print("|---|---|---|---|")
    print("| save (encode, write, fsync, rename) | \(milliseconds(save)) | \(milliseconds(plainWrite)) (write) | \(ratio(save, plainWrite)) |")
    print("| save, against a plain write + fsync | \(milliseconds(save)) | \(milliseconds(plainWriteSynced)) (write + fsync) | \(ratio(save, plainWriteSynced)) |")
    print("| load (read, check, decode) | \(milliseconds(load)) | \(milliseconds(plainRead)) (read) | \(ratio(load, plainRead)) |")
    print("| save, folder layout | \(milliseconds(folderSave)) | \(milliseconds(plainWriteSynced)) (write + fsync) | \(ratio(folderSave, plainWriteSynced)) |")
    print("| load, folder layout | \(milliseconds(folderLoad)) | \(milliseconds(plainRead)) (read) | \(ratio(folderLoad, plainRead)) |")
}

import Foundation
import Testing
@testable import Relata

/// Bad briefcase files give clear errors, never a crash or a partial load; the folder layout saves and loads tables alone.
@Suite final class BriefcaseFileTests {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("relata-briefcase-files-\(UUID().uuidString)")

    init() throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: folder)
    }

    func saved() throws -> (URL, [UInt8]) {
        let briefcase = Briefcase()
        briefcase.addTable(try BriefcaseTests.makeTable())
        let url = folder.appendingPathComponent("good.briefcase")
        try briefcase.save(to: url)
        return (url, Array(try Data(contentsOf: url)))
    }

    func loadError(_ bytes: [UInt8]) throws -> RelataError? {
        let url = folder.appendingPathComponent("bad-\(UUID().uuidString).briefcase")
        try Data(bytes).write(to: url)
        return #expect(throws: RelataError.self) { try Briefcase(contentsOf: url) }
    }

    @Test func aForeignFileIsNotABriefcase() throws {
        let error = try loadError(Array("{\"name\": \"not a briefcase\"}".utf8))
        #expect(error?.code == .invalidBriefcase)
        #expect(error?.message.hasPrefix("not a Relata briefcase") == true)
        #expect(try loadError([])?.message.hasPrefix("not a Relata briefcase") == true)
    }

    @Test func aNewerFormatSaysSo() throws {
        var (_, bytes) = try saved()
        bytes[8] = 3   // the version, little-endian
        #expect(try loadError(bytes)?.message.contains("briefcase format 3, newer than this Relata reads (up to 2)") == true)
    }

    @Test func aTruncatedFileSaysSo() throws {
        let (_, bytes) = try saved()
        for length in [10, 21, bytes.count / 2, bytes.count - 1] {
            let message = try loadError(Array(bytes.prefix(length)))?.message ?? ""
            #expect(message.contains("cut short") || message.contains("ends early"), "\(length): \(message)")
        }
    }

    @Test func everyFlippedByteIsCaught() throws {
        let (_, bytes) = try saved()
        // Flip one byte at many places (every 7th byte): each load fails cleanly, none crashes.
        for position in stride(from: 0, to: bytes.count, by: 7) {
            var damaged = bytes
            damaged[position] ^= 0x5A
            let error = try loadError(damaged)
            #expect(error?.code == .invalidBriefcase, "byte \(position)")
        }
    }

    @Test func aDamagedPayloadWithAMatchingChecksumIsStillCaught() throws {
        // A tool that recomputes the checksum over nonsense: the reader still checks every marker, count and tag.
        let (_, bytes) = try saved()
        func resummed(_ change: (inout [UInt8]) -> Void) -> [UInt8] {
            var damaged = Array(bytes.dropLast(8))
            change(&damaged)
            let checksum = damaged.withUnsafeBytes { BriefcaseFormat.checksum($0) }
            withUnsafeBytes(of: checksum.littleEndian) { damaged.append(contentsOf: $0) }
            return damaged
        }
        // Header 21 bytes, no properties (4), one table (4), its length (8): the table's marker starts at 37.
        let marker = try loadError(resummed { $0[37] = UInt8(ascii: "X") })
        #expect(marker?.message.contains("a table does not start where it should") == true)
        // The table's name length (a u32 after the marker) made huge.
        let name = try loadError(resummed { $0[48] = 0x7F })
        #expect(name?.message.contains("the data ends early") == true)
    }

    /// A briefcase of one table, two rows, the first changed (`N`: 1 → 5).
    func savedWithOneChange(_ name: String) throws -> URL {
        let table = try DataTable(name: "T", fields: [FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("N", .integer)])
        try table.loadRows(named: [["Id": 1, "N": 1], ["Id": 2, "N": 2]])
        try table.rows[0].setValue(5, forKey: "N")
        let briefcase = Briefcase()
        briefcase.addTable(table)
        let url = folder.appendingPathComponent(name)
        try briefcase.save(to: url)
        return url
    }

    /// Format 1 had no edits after a change record: its files still open, their rows without edits.
    @Test func aFormatOneFileStillOpens() throws {
        let url = try savedWithOneChange("format-two.briefcase")
        // Format 2 → 1: drop the record's trailing edit count (u32 0), shorten the table's and the
        // payload's lengths by 4, set the version, and checksum again.
        var bytes = Array(try Data(contentsOf: url).dropLast(8))
        #expect(Array(bytes.suffix(4)) == [0, 0, 0, 0])
        bytes.removeLast(4)
        func shorten(_ offset: Int) {
            let length = bytes[offset..<offset + 8].enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) } - 4
            withUnsafeBytes(of: length.littleEndian) { for (index, byte) in $0.enumerated() { bytes[offset + index] = byte } }
        }
        bytes[8] = 1
        shorten(13)                 // the payload's length, after magic, version and kind
        shorten(21 + 4 + 4)         // the table's, after no properties (u32) and the table count (u32)
        let checksum = bytes.withUnsafeBytes { BriefcaseFormat.checksum($0) }
        withUnsafeBytes(of: checksum.littleEndian) { bytes.append(contentsOf: $0) }
        let old = folder.appendingPathComponent("format-one.briefcase")
        try Data(bytes).write(to: old)

        let loaded = try #require(try Briefcase(contentsOf: old).table(named: "T"))
        #expect(loaded.rows[0]["N"] == 5 && loaded.rows[0].rowState == .modified)
        #expect(loaded.rows[0].edits.isEmpty)
    }

    /// Checksums catch accidents, not a hostile writer: a valid checksum over out-of-range
    /// slots, change ids and counters is refused, never trusted.
    @Test func outOfRangeNumbersWithAValidChecksumAreRefused() throws {
        let url = try savedWithOneChange("one-change.briefcase")
        let bytes = Array(try Data(contentsOf: url))
        // The table is last; its one change record is its last 40 bytes: slot u64, state u8, change id i64,
        // no message (1), one pending value (u32 count, u32 field, tag, i64), no edit buffer (1), no edits (u32).
        let record = bytes.count - 8 - 40
        func patched(at offset: Int, _ value: UInt64) -> [UInt8] {
            var damaged = Array(bytes.dropLast(8))
            withUnsafeBytes(of: value.littleEndian) { for (index, byte) in $0.enumerated() { damaged[offset + index] = byte } }
            let checksum = damaged.withUnsafeBytes { BriefcaseFormat.checksum($0) }
            withUnsafeBytes(of: checksum.littleEndian) { damaged.append(contentsOf: $0) }
            return damaged
        }
        #expect(try Briefcase(contentsOf: url).table(named: "T")?.rows[0]["N"] == 5, "the unpatched file loads")
        for slot in [UInt64.max, UInt64(Int.max) + 1, 2] {
            #expect(try loadError(patched(at: record, slot))?.message.contains("row slot") == true, "slot \(slot)")
        }
        for changeId in [UInt64(Int64.max), UInt64(bitPattern: -1), UInt64(1) << 60] {
            #expect(try loadError(patched(at: record + 9, changeId))?.message.contains("change id") == true, "change id \(changeId)")
        }
        // The counters sit before the columns: after the name and the field JSON; found by their values.
        let counters = try #require(bytes.indices.first { index in
            index + 16 <= bytes.count && bytes[index..<index + 8].elementsEqual(withUnsafeBytes(of: Int64(-1).littleEndian, Array.init))
        })
        #expect(try loadError(patched(at: counters, UInt64(bitPattern: Int64.min)))?.message.contains("temporary key") == true)
        #expect(try loadError(patched(at: counters, 5))?.message.contains("temporary key") == true)
        #expect(try loadError(patched(at: counters + 8, UInt64(Int64.max)))?.message.contains("next change id") == true)
    }

    @Test func aValueOutsideItsFieldsRangeIsRefused() throws {
        let table = try DataTable(name: "T", fields: [FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("S", .smallInt)])
        try table.loadRows(named: [["Id": 1, "S": 12345]])
        let briefcase = Briefcase()
        briefcase.addTable(table)
        let url = folder.appendingPathComponent("small.briefcase")
        try briefcase.save(to: url)
        var bytes = Array(try Data(contentsOf: url).dropLast(8))
        let pattern = withUnsafeBytes(of: Int64(12345).littleEndian, Array.init)
        let at = try #require(bytes.indices.first { bytes[$0...].starts(with: pattern) })
        withUnsafeBytes(of: Int64(70000).littleEndian) { for (index, byte) in $0.enumerated() { bytes[at + index] = byte } }
        let checksum = bytes.withUnsafeBytes { BriefcaseFormat.checksum($0) }
        withUnsafeBytes(of: checksum.littleEndian) { bytes.append(contentsOf: $0) }
        #expect(try loadError(bytes)?.message.contains("70000 is out of range for smallInt") == true)
    }

    /// Found by `Scripts/fuzz.sh briefcase`: a payload length near `UInt64.max` overflowed
    /// while the error message was being written.
    @Test func aHugePayloadLengthIsDamageNotATrap() throws {
        let bytes = try #require(Data(base64Encoded: "UkVMQVRBQkMBAAAAAPv/////////AAD///8A9P9hmbl+Lg=="))
        let error = #expect(throws: RelataError.self) { try Briefcase(data: bytes) }
        #expect(error?.message.contains("cut short or added to") == true)
    }

    @Test func anInterruptedSaveLeavesThePreviousBriefcase() throws {
        let url = folder.appendingPathComponent("interrupted.briefcase")
        let first = Briefcase()
        first.properties["Generation"] = "1"
        try first.save(to: url)
        // A save killed while writing leaves part of its new bytes in the temporary file.
        let partial = Array(try Data(contentsOf: url).prefix(30))
        try Data(partial).write(to: AtomicFile.temporaryURL(for: url))
        #expect(try Briefcase(contentsOf: url).properties["Generation"] == "1")
        first.properties["Generation"] = "2"
        try first.save(to: url)
        #expect(try Briefcase(contentsOf: url).properties["Generation"] == "2")
        #expect(!FileManager.default.fileExists(atPath: AtomicFile.temporaryURL(for: url).path))
    }

    @Test func anInterruptedFolderSaveLeavesThePreviousBriefcase() throws {
        let url = folder.appendingPathComponent("interrupted-folder.briefcase")
        let briefcase = Briefcase()
        let table = try DataTable(name: "T", fields: [FieldDefinition("X", .integer)])
        try table.loadRows([[1]])
        briefcase.addTable(table)
        try briefcase.save(to: url, layout: .folder)
        // A save killed after writing its table file, before the manifest was replaced.
        try Data("half a table".utf8).write(to: url.appendingPathComponent("2-1.table"))
        try Data("half a manifest".utf8).write(to: AtomicFile.temporaryURL(for: url.appendingPathComponent("manifest.briefcase")))
        #expect(try Briefcase(contentsOf: url).table(named: "T")?.rows.first?["X"] == 1)
        try table.rows[0].setValue(2, forKey: "X")
        try briefcase.save(to: url, layout: .folder)
        #expect(try Briefcase(contentsOf: url).table(named: "T")?.rows.first?["X"] == 2)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: url.path)) == ["manifest.briefcase", "2-1.table"],
                "the leftovers of the interrupted save are gone")
    }

    @Test func aMissingFileIsAFileError() {
        let error = #expect(throws: RelataError.self) { try Briefcase(contentsOf: folder.appendingPathComponent("none.briefcase")) }
        #expect(error?.code == .fileFailed)
    }

    @Test func aFolderSavesAndLoadsOneTableAlone() throws {
        let briefcase = Briefcase()
        let things = try BriefcaseTests.makeTable()
        let other = try DataTable(name: "Other", fields: [FieldDefinition("X", .integer)])
        try other.loadRows([[1], [2]])
        briefcase.addTable(things)
        briefcase.addTable(other)
        briefcase.properties["DataVersion"] = "1"
        let url = folder.appendingPathComponent("folder.briefcase")
        try briefcase.save(to: url, layout: .folder)
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: url.path))
        #expect(files == ["manifest.briefcase", "1-1.table", "1-2.table"])
        #expect(Briefcase.layout(of: url) == .folder)
        #expect(Briefcase.layout(of: try saved().0) == .file)

        try other.rows[0].setValue(100, forKey: "X")
        briefcase.properties["DataVersion"] = "2"
        try briefcase.save(tables: ["Other"], toFolder: url)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: url.path)) == ["manifest.briefcase", "1-1.table", "2-2.table"],
                "only Other's file was rewritten; the old one is gone")

        let loaded = try Briefcase(contentsOf: url)
        #expect(loaded.properties["DataVersion"] == "2")
        #expect(BriefcaseTests.snapshot(loaded.table(named: "Things")!) == BriefcaseTests.snapshot(things))
        #expect(loaded.table(named: "Other")?.rows.map { $0["X"] } == [100, 2])

        try FileManager.default.removeItem(at: url.appendingPathComponent("1-1.table"))
        #expect(try Briefcase.loadTable(named: "other", from: url).rows[0]["X"] == 100, "one table loads without the others")
        let missing = #expect(throws: RelataError.self) { try Briefcase(contentsOf: url) }
        #expect(missing?.message.contains("lists 1-1.table for table Things, but the file is missing") == true)
        #expect(throws: RelataError.self) { try briefcase.save(tables: ["Nope"], toFolder: url) }
    }

    @Test func aFileBriefcaseLoadsOneTableByName() throws {
        let (url, _) = try saved()
        #expect(try Briefcase.loadTable(named: "THINGS", from: url).name == "Things")
        #expect((#expect(throws: RelataError.self) { try Briefcase.loadTable(named: "Nope", from: url) })?.code == .unknownTable)
    }
}

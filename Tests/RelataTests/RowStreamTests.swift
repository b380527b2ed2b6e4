import Foundation
import Testing
@testable import Relata

/// The binary row stream of `GetData` answers: exact values, read as bytes arrive, and
/// every damaged or hostile stream refused with a clear error.
@Suite struct RowStreamTests {
    static let fields = [
        FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("Price", .currency), FieldDefinition("When", .dateTime),
        FieldDefinition("Key", .guid), FieldDefinition("Bytes", .blob), FieldDefinition("Note", .string), FieldDefinition("Ok", .boolean),
        FieldDefinition("Ratio", .float),
    ]

    static func rows(_ count: Int) -> [Value] {
        var values: [Value] = []
        for index in 0..<count {
            values.append(.integer(Int64(index)))
            guard index % 3 != 2 else {
                values += Array(repeating: Value.null, count: fields.count - 1)
                continue
            }
            let when = Date(timeIntervalSinceReferenceDate: Double(index) + 0.123456)
            values += [.decimal(Decimal(string: "\(index).0001")!), .date(when), .guid(UUID()), .blob(Data([0, 255, UInt8(index % 256)]))]
            values += [.string("row ü \(index)"), .boolean(index % 2 == 0), .double(Double(index) / 3)]
        }
        return values
    }

    /// A stream of a schema and two tables, the first in two batches.
    static func stream(_ values: [Value], count: Int) throws -> [UInt8] {
        let half = count / 2
        let width = fields.count
        var bytes = RowStreamWriter.start() + (try RowStreamWriter.schema(Data(#"{"version":"x"}"#.utf8)))
        bytes += try RowStreamWriter.table(name: "Items", fields: fields, expectedRows: count)
        bytes += try RowStreamWriter.rows(Array(values[0..<half * width]), count: half, fields: fields)
        bytes += try RowStreamWriter.rows(Array(values[half * width..<count * width]), count: count - half, fields: fields)
        bytes += try RowStreamWriter.tableEnd(rows: count)
        bytes += try RowStreamWriter.table(name: "Empty", fields: [FieldDefinition("Id", .integer)], expectedRows: 0)
        bytes += try RowStreamWriter.tableEnd(rows: 0) + RowStreamWriter.end()
        return bytes
    }

    @Test func everyTypeArrivesExactlyAsSent() throws {
        let values = Self.rows(100)
        let tables = try RowStreamTables(Self.stream(values, count: 100))
        #expect(tables.schemaJSON == Data(#"{"version":"x"}"#.utf8))
        #expect(tables.tables.map(\.name) == ["Items", "Empty"])
        #expect(tables.tables[0].rowCount == 100 && tables.tables[1].rowCount == 0)
        let received = tables.tables[0].rows.flatMap { row in Self.fields.map { row[$0.name] } }
        #expect(received == values)
        #expect(tables.tables[0].rows[0].rowState == .unchanged)
    }

    /// However the bytes are cut into chunks, the same events come out.
    /// A table frame's field definitions are their `Codable` JSON, written without Foundation.
    @Test func fieldDefinitionsAreTheirCodableJSON() throws {
        let when = Date(timeIntervalSinceReferenceDate: 812_345_678.125)
        var fields = Self.fields
        fields += [
            FieldDefinition("Code \"q\" é\u{1}", .string, size: 40, required: true, readOnly: true, defaultValue: .string("a\\b\n"),
                            logChanges: false, serverAutoRefresh: true, description: "the \"code\"\t"),
            FieldDefinition("Amount", .decimal, precision: 12, scale: 4, defaultValue: .decimal(Decimal(string: "-12.5000")!)),
            FieldDefinition("Seen", .dateTime, defaultValue: .date(when)), FieldDefinition("Ratio2", .float, defaultValue: .double(-0.25)),
            FieldDefinition("Flag", .boolean, defaultValue: .boolean(false)), FieldDefinition("Count", .largeInt, defaultValue: .integer(.min)),
            FieldDefinition("Ref", .guid, defaultValue: .guid(UUID())), FieldDefinition("Raw", .blob, defaultValue: .blob(Data([0, 255]))),
            FieldDefinition("Auto", .autoInc, primaryKey: true),
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let written = try FieldDefinition.json(fields, table: "T")
        #expect(written == Array(try encoder.encode(fields)))
        #expect(try JSONDecoder().decode([FieldDefinition].self, from: Data(written)) == fields)
        #expect(try FieldDefinition.json([], table: "T") == Array("[]".utf8))
        let null = [FieldDefinition("Nothing", .string, defaultValue: .null)]   // read back as no default, as Codable's is
        #expect(try FieldDefinition.json(null, table: "T") == Array(try encoder.encode(null)))
        let infinite = #expect(throws: RelataError.self) {
            try FieldDefinition.json([FieldDefinition("Bad", .float, defaultValue: .double(.infinity))], table: "T")
        }
        #expect(infinite?.code == .invalidArgument)
        #expect(infinite?.message.contains("cannot be sent as JSON") == true)
    }

    @Test func bytesMayArriveInAnyChunks() throws {
        let values = Self.rows(10)
        let bytes = try Self.stream(values, count: 10)
        for size in [1, 2, 3, 5, 7, 64, 1000] {
            var reader = RowStreamReader()
            var rows: [Value] = []
            var events = 0
            for start in stride(from: 0, to: bytes.count, by: size) {
                for event in try reader.append(bytes[start..<min(start + size, bytes.count)]) {
                    events += 1
                    if case .rows(let batch) = event { rows += batch.values }
                }
            }
            try reader.finish()
            #expect(rows == values, "chunks of \(size)")
            #expect(events == 8)
            #expect(reader.bytesRead == bytes.count)
        }
    }

    @Test func aStreamCutShortOrDamagedIsRefusedNamingWhy() throws {
        let bytes = try Self.stream(Self.rows(4), count: 4)
        func failure(_ damaged: [UInt8]) -> String? {
            do {
                _ = try RowStreamTables(damaged)
                return nil
            } catch let error as RelataError {
                #expect(error.code == .invalidResponse)
                return error.message
            } catch {
                return "\(error)"
            }
        }
        #expect(failure(Array(bytes.dropLast(5)))?.contains("stops") == true)
        let cut = RowStreamWriter.start() + (try RowStreamWriter.table(name: "T", fields: [FieldDefinition("Id", .integer)], expectedRows: 9))
            + (try RowStreamWriter.rows([1], count: 1, fields: [FieldDefinition("Id", .integer)]))
        #expect(failure(cut)?.contains("stops inside table T after 1 rows") == true)
        #expect(failure(Array("NOTRELAT".utf8) + bytes.dropFirst(8))?.contains("not a Relata row stream") == true)
        var version = bytes
        version[8] = 9
        #expect(failure(version)?.contains("version 9") == true)
        var kind = bytes
        kind[12] = 77
        #expect(failure(kind)?.contains("77 is not a frame kind") == true)
        var huge = bytes
        huge[13...16] = [0xff, 0xff, 0xff, 0x7f]
        #expect(failure(huge)?.contains("more than the") == true)
        #expect(failure(bytes + RowStreamWriter.end())?.contains("follow the end") == true)
        let rowsOutside = RowStreamWriter.start() + (try RowStreamWriter.rows([1], count: 1, fields: [FieldDefinition("Id", .integer)]))
        #expect(failure(rowsOutside)?.contains("outside a table") == true)
        let miscounted = RowStreamWriter.start() + (try RowStreamWriter.table(name: "T", fields: [FieldDefinition("Id", .integer)], expectedRows: 1))
            + (try RowStreamWriter.tableEnd(rows: 3))
        #expect(failure(miscounted)?.contains("says it sent 3 rows; 0 arrived") == true)
        let duplicateKeys = RowStreamWriter.start() + (try RowStreamWriter.table(name: "T", fields: [FieldDefinition("Id", .integer, primaryKey: true)], expectedRows: 2))
            + (try RowStreamWriter.rows([1, 1], count: 2, fields: [FieldDefinition("Id", .integer, primaryKey: true)]))
        #expect(throws: RelataError.self) { try RowStreamTables(duplicateKeys) }
        let fieldless = RowStreamWriter.start() + (try RowStreamWriter.table(name: "T", fields: [], expectedRows: 0))
        #expect(failure(fieldless)?.contains("table T has no fields") == true)
    }

    /// Every prefix and every single-byte change of a stream is read or refused, never a trap.
    @Test func noDamageReachesATrap() throws {
        let bytes = try Self.stream(Self.rows(3), count: 3)
        for length in 0..<bytes.count { _ = try? RowStreamTables(bytes[0..<length]) }
        for index in bytes.indices {
            for replacement: UInt8 in [0, 1, 0x7f, 0xff] {
                var damaged = bytes
                damaged[index] = replacement
                _ = try? RowStreamTables(damaged)
            }
        }
    }

    @Test func anErrorFrameEndsTheStreamWithTheServersAnswer() throws {
        let answer = Data(#"{"error":{"code":"refused","message":"no"}}"#.utf8)
        let bytes = RowStreamWriter.start() + (try RowStreamWriter.table(name: "T", fields: [FieldDefinition("Id", .integer)], expectedRows: 5))
            + (try RowStreamWriter.rows([1], count: 1, fields: [FieldDefinition("Id", .integer)])) + RowStreamWriter.error(answer)
        let tables = try RowStreamTables(bytes)
        #expect(tables.errorJSON == answer)
    }
}

/// Loading a table in batches (as a fetched answer arrives) checks each batch's keys against
/// every row loaded before, and against keys an accepted change wrote since.
@Suite struct BatchLoadKeyTests {
    @Test func keysAreCheckedAcrossBatchesAndAfterAcceptedChanges() throws {
        let table = try DataTable(name: "T", fields: [FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("Name", .string)])
        try table.loadRows([[1, "a"], [2, "b"]])
        #expect(throws: RelataError.self) { try table.loadRows([[2, "again"]]) }
        try table.loadRows([[3, "c"]])
        #expect(throws: RelataError.self) { try table.loadRows([[3, "again"]]) }
        try table.rows[2].setValue(30, forKey: "Id")
        var delta = try table.makeDelta()
        delta.changes[0].status = .resolved
        try table.accept(delta)
        #expect(throws: RelataError.self) { try table.loadRows([[30, "taken since the accept"]]) }
        try table.loadRows([[3, "free again"]])
        #expect(table.rows.map { $0["Id"] } == [1, 2, 30, 3])
    }
}

/// A row stream's frame loads column by column with the checks of loading rows of values.
@Suite struct ColumnLoadTests {
    static let fields = [
        FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("Name", .string, required: true),
        FieldDefinition("Small", .smallInt), FieldDefinition("Ratio", .singleFloat), FieldDefinition("When", .dateTime),
    ]

    static func batch(_ rows: [[Value]], fields: [FieldDefinition] = fields) -> RowStreamRows {
        var builder = RowStreamRowsBuilder(fields: fields)
        for row in rows { builder.append(row: row) }
        return builder.take()
    }

    /// The error a load of `rows` gives, and whether the table kept its rows as they were.
    static func failure(loading rows: RowStreamRows, into table: DataTable) -> RelataError? {
        let before = table.rows.map { row in fields.map { row[$0.name] } }
        do {
            try table.loadRows(rows)
            return nil
        } catch let error as RelataError {
            #expect(table.rows.map { row in fields.map { row[$0.name] } } == before, "nothing of a refused batch is loaded")
            return error
        } catch {
            Issue.record("\(error)")
            return nil
        }
    }

    @Test func aBatchLoadsAsTheSameRowsOfValuesWould() throws {
        let when = Date(timeIntervalSinceReferenceDate: 12.5)
        let rows: [[Value]] = (0..<150).map { index in
            let id = Value.integer(Int64(index))
            let small: Value = index % 7 == 0 ? .null : id
            let date: Value = index % 2 == 0 ? .date(when) : .null
            return [id, .string("n\(index)"), small, .double(Double(index) / 3), date]
        }
        let byColumns = try DataTable(name: "T", fields: Self.fields)
        let byValues = try DataTable(name: "T", fields: Self.fields)
        let index = try byColumns.index(forField: "Small")
        try byColumns.loadRows(Self.batch(Array(rows[0..<100])))
        try byColumns.loadRows(Self.batch(Array(rows[100...])))
        try byValues.loadRows(rows)
        let read = { (table: DataTable) in table.rows.map { row in Self.fields.map { row[$0.name] } } }
        #expect(read(byColumns) == read(byValues))
        #expect(byColumns.rows[1]["Ratio"] == .double(Double(Float(1.0 / 3))), "a single float is rounded to a Float")
        #expect(index.rows(for: .integer(142)).map { $0["Id"] } == [142], "the index knows the loaded rows")
        #expect(byColumns.rows.allSatisfy { $0.rowState == .unchanged })
    }

    @Test func keysAreCheckedWithinTheBatchAndAgainstEarlierRows() throws {
        let table = try DataTable(name: "T", fields: Self.fields)
        try table.loadRows(Self.batch([[1, "a", .null, .null, .null]]))
        let again = Self.failure(loading: Self.batch([[2, "b", .null, .null, .null], [1, "c", .null, .null, .null]]), into: table)
        #expect(again?.code == .constraintViolation && again?.location == "row 2 to load")
        let twice = Self.failure(loading: Self.batch([[5, "b", .null, .null, .null], [5, "c", .null, .null, .null]]), into: table)
        #expect(twice?.code == .constraintViolation && twice?.message.contains("used twice") == true)
        let noKey = Self.failure(loading: Self.batch([[.null, "b", .null, .null, .null]]), into: table)
        #expect(noKey?.location == "row 1 to load")
        // A refused batch's keys are not remembered as loaded.
        try table.loadRows(Self.batch([[2, "b", .null, .null, .null], [5, "c", .null, .null, .null]]))
        #expect(table.rows.map { $0["Id"] } == [1, 2, 5])
    }

    @Test func valuesOutsideTheirFieldAreRefusedNamingTheRow() throws {
        let table = try DataTable(name: "T", fields: Self.fields)
        let missing = Self.failure(loading: Self.batch([[1, "a", .null, .null, .null], [2, .null, .null, .null, .null]]), into: table)
        #expect(missing?.code == .requiredValueMissing && missing?.field == "Name" && missing?.location == "row 2 to load")
        let outOfRange = Self.failure(loading: Self.batch([[1, "a", 70_000, .null, .null]]), into: table)
        #expect(outOfRange?.code == .valueOutOfRange && outOfRange?.field == "Small" && outOfRange?.location == "row 1 to load")
        // A batch made for other field types goes through the table's coercion.
        let asStrings = Self.batch([[1, "a", "x", .null, .null]], fields: Self.fields.enumerated().map { index, field in
            index == 2 ? FieldDefinition("Small", .string) : field
        })
        #expect(Self.failure(loading: asStrings, into: table)?.code == .typeMismatch)
        let narrow = Self.batch([[1]], fields: [Self.fields[0]])
        #expect(Self.failure(loading: narrow, into: table)?.code == .invalidImport)
        #expect(table.rowCount == 0)
    }
}

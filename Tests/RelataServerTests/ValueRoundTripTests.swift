import Foundation
import Relata
import RelataServer
import RelataServerTestSupport
import Testing

/// Every data type through the storage and back, on every backend: byte-identical values.
@Suite(.timeLimit(.minutes(10))) struct ValueRoundTripTests {
    static let fields = [
        FieldDefinition("Id", .autoInc, primaryKey: true),
        FieldDefinition("Whole", .largeInt), FieldDefinition("Small", .smallInt),
        FieldDefinition("Real", .float), FieldDefinition("Money", .currency), FieldDefinition("Exact", .decimal),
        FieldDefinition("Flag", .boolean), FieldDefinition("When", .dateTime), FieldDefinition("Key", .guid),
        FieldDefinition("Bytes", .blob), FieldDefinition("Text", .string, size: 200), FieldDefinition("Memo", .memo),
    ]

    static let rows: [[Value]] = [
        [1, .integer(.max), .integer(-32768), .double(0.1), .decimal(Decimal(string: "922337203685477.5807")!),
         .decimal(Decimal(string: "0.000000000000000000000000000000000001")!), true,
         .date(ISO8601Parse("2026-11-24T10:00:00.123Z")), .guid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
         .blob(Data((0...255).map { UInt8($0) })), "Grüße, 世界 👋 'quoted' \"double\" \\ back", .string(String(repeating: "long ", count: 2000))],
        [2, .integer(.min), 0, .double(-1.7976931348623157e308), .decimal(Decimal(string: "-0.01")!),
         .decimal(Decimal(string: "12345678901234567890123456789012345678")!), false,
         .date(ISO8601Parse("1899-12-30T00:00:00Z")), .guid(UUID(uuidString: "00000000-0000-0000-0000-000000000000")!),
         .blob(Data()), "", ""],
        [3, .null, .null, .null, .null, .null, .null, .null, .null, .null, .null, .null],
        [4, 0, 1, .double(.leastNonzeroMagnitude), .decimal(0), .decimal(Decimal(string: "1e-10")!), true,
         .date(ISO8601Parse("2038-01-19T03:14:08.999999Z")), .guid(UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!),
         .blob(Data([0])), " leading and trailing ", "line\nbreak\ttab"],
        // A date a rule made (JavaScript's milliseconds), and one of a year the Julian calendar would shift.
        [5, 1, 1, .double(1.5), .decimal(1), .decimal(1), true, .date(Date(microsecondsSince1970: 1_732_612_347_956_000)),
         .guid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5E")!), .blob(Data([1])), "x", "y"],
        [6, 2, 2, .double(2.5), .decimal(2), .decimal(2), false, .date(ISO8601Parse("1200-06-15T12:00:00.5Z")),
         .guid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5D")!), .blob(Data([2])), "x", "y"],
    ]

    static func ISO8601Parse(_ text: String) -> Date {
        (try? FieldDefinition("d", .dateTime).parsed(text).dateValue ?? nil) ?? Date(timeIntervalSince1970: 0)
    }

    @Test(arguments: StorageBackend.allCases)
    func everyTypeComesBackAsItWent(backend: StorageBackend) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("relata-values-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (database, cleanup) = try backend.makeDatabase(in: folder)
        defer { cleanup() }
        let schema = try SchemaDefinition(name: "Types", tables: [TableDefinition(name: "Everything", fields: Self.fields)])
        let storage = try SQLStorage(database: database, schema: schema)
        let table = try DataTable(name: "Everything", fields: Self.fields)
        try table.loadRows(Self.rows)
        #expect(try storage.seedIfEmpty(with: [table]))

        let stored = try storage.read { connection in try storage.loadTable("Everything", in: connection) }
        #expect(stored.rowCount == Self.rows.count)
        for (index, expected) in Self.rows.enumerated() {
            for (field, value) in zip(Self.fields, expected) {
                let read = stored.rows[index][field.name]
                #expect(read == value, "\(backend) row \(index + 1) \(field.name): \(read) ≠ \(value)")
                if case .date(let a) = read, case .date(let b) = value {
                    #expect(a.timeIntervalSinceReferenceDate.bitPattern == b.timeIntervalSinceReferenceDate.bitPattern, "the very same Date")
                }
            }
        }
    }

    /// Text holding a NUL (U+0000) is refused by name at the write, on every site: PostgreSQL
    /// cannot store it, and SQLite through GRDB would silently keep only what comes before it.
    /// A hand-made delta carrying it anyway is refused by the server in the same words.
    @Test(arguments: StorageBackend.allCases)
    func textHoldingANULIsRefusedClearlyNotCutShort(backend: StorageBackend) async throws {
        let database = try DataServiceTests.Database(backend: backend)
        defer { withExtendedLifetime(database) {} }   // its database lives as long as the test
        let (clients, _, _) = try DataServiceTests.clientTables()
        let words = "Clients.Name, row (ClientId=1): text holding NUL (U+0000) cannot be stored"
        let refused = #expect(throws: RelataError.self) { try clients.rows[0].setValue("Acme\u{0}Corp", forKey: "Name") }
        #expect(refused?.description.hasPrefix(words) == true, "\(refused?.description ?? "")")

        try clients.rows[0].setValue("Acme Corp", forKey: "Name")
        var delta = try clients.makeDelta()
        delta.changes[0].newValues["Name"] = .string("Acme\u{0}Corp")
        let change = try await database.service.updateData([delta], session: Session())[0].changes[0]
        #expect(change.status == .failed)
        #expect(change.message?.contains("text holding NUL (U+0000) cannot be stored") == true, "\(change.message ?? "")")
        #expect(try database.service.storedRows(of: "Clients")[0]["Name"] == "Acme")
    }
}

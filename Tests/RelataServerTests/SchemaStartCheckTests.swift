import Foundation
import Relata
@testable import RelataServer
import RelataServerTestSupport
import Testing

/// A server refuses to start on a database that does not hold its schema's tables — a column
/// missing, of another type, NOT NULL where the field may be NULL, or a NOT NULL column the schema
/// does not know — naming each difference: requests would otherwise fail later, one by one.
@Suite(.timeLimit(.minutes(5))) struct SchemaStartCheckTests {
    static func schema(_ fields: [FieldDefinition]) throws -> SchemaDefinition {
        try SchemaDefinition(name: "Lab", tables: [TableDefinition(name: "Samples", fields: fields)])
    }

    static let id = FieldDefinition("Id", .integer, primaryKey: true)

    @Test(arguments: StorageBackend.allCases)
    func aDatabaseThatDoesNotHoldTheSchemaIsRefusedNamingEachDifference(backend: StorageBackend) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("relata-check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (database, cleanup) = try backend.makeDatabase(in: folder)
        defer { cleanup() }
        _ = try SQLStorage(database: database, schema: Self.schema([Self.id, FieldDefinition("Label", .string, size: 20, required: true)]))
        // The same schema again: nothing differs.
        _ = try SQLStorage(database: database, schema: Self.schema([Self.id, FieldDefinition("Label", .string, size: 20, required: true)]))

        let cases: [(String, [FieldDefinition], [String])] = [
            ("a field the database lacks", [Self.id, FieldDefinition("Label", .string, required: true), FieldDefinition("Year", .integer)],
             ["Samples.Year: the database has no such column; add it with relata migrate, or: ALTER TABLE \"Samples\" ADD COLUMN \"Year\" \(backend == .sqlite ? "INTEGER" : "BIGINT")"]),
            ("another type", [Self.id, FieldDefinition("Label", .integer, required: true)],
             ["Samples.Label: the column is \(backend == .sqlite ? "TEXT" : "text"), the field is integer"]),
            ("NULL allowed where the column refuses it", [Self.id, FieldDefinition("Label", .string)],
             ["Samples.Label: the column is NOT NULL, the field may be NULL"]),
            ("a NOT NULL column the schema lacks", [Self.id],
             ["Samples: the database's column Label is NOT NULL and the schema has no field for it"]),
            ("another primary key", [FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("Label", .string, required: true, primaryKey: true)],
             ["Samples: the database's primary key is (id), the schema's is (id, label)"]),
        ]
        for (what, fields, words) in cases {
            let error = #expect(throws: RelataError.self, "\(what)") { try SQLStorage(database: database, schema: Self.schema(fields)) }
            #expect(error?.code == .invalidSchema)
            for word in words {
                #expect(error?.message.contains(word) == true, "\(what): \(error?.message ?? "")")
            }
        }
    }
}

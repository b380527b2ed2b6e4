import Foundation
import Relata
@testable import RelataServer
import RelataServerTestSupport
import RelataTestSupport
import Testing

/// `SchemaMigration` (`relata migrate`): additive changes in one transaction on both databases;
/// anything else refused with nothing changed; a start meanwhile waits for it.
@Suite(.timeLimit(.minutes(5))) struct SchemaMigrationTests {
    static let authorFields = [FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("Name", .string, size: 40)]
    static let bookFields = [FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("Title", .string, size: 40), FieldDefinition("AuthorId", .integer)]

    static func before() throws -> SchemaDefinition {
        try SchemaDefinition(name: "Lab", tables: [TableDefinition(name: "Authors", fields: authorFields), TableDefinition(name: "Books", fields: bookFields)])
    }

    /// A new nullable column, a required one with a default, a foreign key and a new table.
    static func after() throws -> SchemaDefinition {
        var pages = FieldDefinition("Pages", .integer, required: true)
        pages.defaultValue = .integer(100)
        return try SchemaDefinition(name: "Lab", tables: [
            TableDefinition(name: "Authors", fields: authorFields + [FieldDefinition("Born", .integer)]),
            TableDefinition(name: "Books", fields: bookFields + [pages],
                            foreignKeys: [ForeignKeyDefinition(field: "AuthorId", references: "Authors", referencedField: "Id")]),
            TableDefinition(name: "Shelves", fields: [FieldDefinition("Id", .integer, primaryKey: true)]),
        ])
    }

    /// A database made with `before()` and holding an author and books (id, author), removed when the value goes.
    final class Seeded {
        let database: any SQLDatabase
        private let folder: TemporaryFolder
        private let cleanup: @Sendable () -> Void

        init(_ backend: StorageBackend, books: [(Int, Int)] = [(1, 1), (2, 1)]) throws {
            folder = try TemporaryFolder()
            (database, cleanup) = try backend.makeDatabase(in: folder.url)
            _ = try SQLStorage(database: database, schema: before())
            try database.inTransaction { connection in
                try connection.execute("INSERT INTO \"Authors\" (\"Id\", \"Name\") VALUES (1, 'Ann')", [])
                for (id, author) in books {
                    try connection.execute("INSERT INTO \"Books\" (\"Id\", \"Title\", \"AuthorId\") VALUES (\(id), 'B\(id)', \(author))", [])
                }
            }
        }

        deinit { cleanup() }   // before the folder goes
    }

    @Test(arguments: StorageBackend.allCases)
    func additiveChangesAreShownThenMadeInOneTransactionKeepingTheRows(backend: StorageBackend) throws {
        let seeded = try Seeded(backend)
        defer { withExtendedLifetime(seeded) {} }
        let database = seeded.database
        let refused = #expect(throws: RelataError.self, "the start refuses first") { try SQLStorage(database: database, schema: Self.after()) }
        #expect(refused?.message.contains("Shelves: the database has no such table; relata migrate creates it") == true, "\(refused?.message ?? "")")
        #expect(refused?.message.contains("Books.AuthorId: the database has no foreign key to Authors.Id") == true)

        let planned = try SchemaMigration.run(Self.after(), on: database, dryRun: true)
        let text = planned.steps.map(\.description).joined(separator: "\n")
        #expect(text.contains(#"ALTER TABLE "Authors" ADD COLUMN "Born""#), "\(text)")
        #expect(text.contains(#"CREATE TABLE IF NOT EXISTS "Shelves""#), "\(text)")
        #expect(text.contains(backend == .sqlite ? #"RENAME TO "Books""# : #"ALTER TABLE "Books" ADD FOREIGN KEY ("AuthorId") REFERENCES "Authors" ("Id")"#), "\(text)")
        #expect(text.contains(backend == .sqlite ? "-- ?1 = 100" : "-- $1 = 100"), "\(text)")
        #expect(throws: RelataError.self, "a dry run changes nothing") { try SQLStorage(database: database, schema: Self.after()) }

        let made = try SchemaMigration.run(Self.after(), on: database, dryRun: false)
        #expect(made.steps.count == planned.steps.count)
        let storage = try SQLStorage(database: database, schema: Self.after())
        let books = try storage.read { try storage.loadTable("Books", in: $0) }
        #expect(books.rows.map { $0["Pages"] } == [.integer(100), .integer(100)], "the rows stay, the required column filled with its default")
        #expect(books.rows.map { $0["Title"] } == [.string("B1"), .string("B2")])
        #expect(throws: SQLError.self, "the new foreign key holds") {
            try database.inTransaction { try $0.execute("INSERT INTO \"Books\" (\"Id\", \"Title\", \"AuthorId\", \"Pages\") VALUES (3, 'B3', 99, 1)", []) }
        }
        #expect(try SchemaMigration.run(Self.after(), on: database, dryRun: false).steps.isEmpty, "a second run has nothing to do")
    }

    @Test(arguments: StorageBackend.allCases)
    func changesThatCouldLoseDataAreRefusedAndNothingChanges(backend: StorageBackend) throws {
        let seeded = try Seeded(backend)
        defer { withExtendedLifetime(seeded) {} }
        let database = seeded.database
        var retyped = try Self.after()
        retyped.tables[1].fields[1] = FieldDefinition("Title", .integer)
        retyped.tables[1].fields[3].defaultValue = nil   // Pages: required, no default, two rows
        let error = #expect(throws: RelataError.self) { try SchemaMigration.run(retyped, on: database, dryRun: false) }
        #expect(error?.code == .invalidSchema)
        let message = error?.message ?? ""
        #expect(message.contains("Books.Title: the column is"), "\(message)")
        #expect(message.contains("Books.Pages: the field is required and has no defaultValue, and the table has 2 row(s)"), "\(message)")
        #expect(message.contains("nothing was changed"))
        #expect(try SchemaMigration.run(Self.before(), on: database, dryRun: true).steps.isEmpty, "the database is as it was (no Born, no Shelves)")
    }

    /// A table whose stored name changed looks like a new table and an old one: the start and
    /// the migration refuse rather than serve an empty table.
    @Test(arguments: StorageBackend.allCases)
    func aRenamedTableIsRefusedNotReplacedByAnEmptyOne(backend: StorageBackend) throws {
        let seeded = try Seeded(backend)
        defer { withExtendedLifetime(seeded) {} }
        let database = seeded.database
        var renamed = try Self.before()
        renamed.tables[1].storedName = "Volumes"
        let start = #expect(throws: RelataError.self) { try SQLStorage(database: database, schema: renamed) }
        #expect(start?.message.contains("Books (stored as Volumes): the database has no such table; relata migrate creates it") == true, "\(start?.message ?? "")")
        let error = #expect(throws: RelataError.self) { try SchemaMigration.run(renamed, on: database, dryRun: false) }
        #expect(error?.message.contains(#"Books (stored as Volumes): the database has no such table, but its table Books has the same columns"#) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains(#"ALTER TABLE "Books" RENAME TO "Volumes""#) == true, "\(error?.message ?? "")")
    }

    @Test(arguments: StorageBackend.allCases)
    func aForeignKeyThatStoredRowsBreakIsRefusedAndNothingChanges(backend: StorageBackend) throws {
        let seeded = try Seeded(backend, books: [(1, 1), (2, 42)])
        defer { withExtendedLifetime(seeded) {} }
        let database = seeded.database
        let error = #expect(throws: RelataError.self) { try SchemaMigration.run(Self.after(), on: database, dryRun: false) }
        #expect(error?.message.contains("nothing was changed") == true, "\(error?.message ?? "")")
        #expect(try SchemaMigration.run(Self.before(), on: database, dryRun: true).steps.isEmpty, "the database is as it was")
    }

    /// Servers starting while a migration runs wait for it: each starts on the migrated tables or,
    /// having begun before it, is refused for the old ones — never halfway, never another error.
    @Test(arguments: StorageBackend.allCases)
    func serversStartingDuringAMigrationSeeItWholeOrNotAtAll(backend: StorageBackend) async throws {
        let folder = try TemporaryFolder()
        let (databases, cleanup) = try backend.makeSharedDatabase(connections: 4, in: folder.url)
        defer { cleanup(); withExtendedLifetime(folder) {} }
        _ = try SQLStorage(database: databases[0], schema: Self.before())
        let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
            group.addTask {
                _ = try SchemaMigration.run(Self.after(), on: databases[0], dryRun: false)
                return "migrated"
            }
            for database in databases.dropFirst() {
                group.addTask {
                    do {
                        _ = try SQLStorage(database: database, schema: Self.after())
                        return "started"
                    } catch let error as RelataError where error.code == .invalidSchema && error.message.contains("does not match the schema Lab") {
                        return "refused"
                    }
                }
            }
            var outcomes: [String] = []
            for try await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        #expect(outcomes.contains("migrated"))
        #expect(outcomes.count == 4)
        _ = try SQLStorage(database: databases[1], schema: Self.after())
    }
}

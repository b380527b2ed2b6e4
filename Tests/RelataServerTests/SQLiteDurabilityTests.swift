import Foundation
import Relata
@testable import RelataServer
import RelataTestSupport
import Testing

/// A SQLite file's commits wait for the disk unless asked not to: GRDB turns WAL on with
/// `synchronous = NORMAL`, which would let an answered apply vanish in a power cut.
@Suite struct SQLiteDurabilityTests {
    static func synchronousSetting(of database: SQLiteDatabase) throws -> Value? {
        try database.write { try $0.value("PRAGMA synchronous", [], reading: FieldDefinition("s", .integer)) }
    }

    @Test func aDatabaseFileCommitsDurablyByDefault() throws {
        let folder = try TemporaryFolder()
        let database = try SQLiteDatabase(path: folder.url.appendingPathComponent("data.sqlite").path)
        #expect(try Self.synchronousSetting(of: database) == .integer(2), "synchronous = FULL")
        let journal = try database.write { try $0.value("PRAGMA journal_mode", [], reading: FieldDefinition("j", .string)) }
        #expect(journal == .string("wal"))
    }

    @Test func aDatabaseForSessionsMayCommitBeforeTheDiskHasIt() throws {
        let folder = try TemporaryFolder()
        let database = try SQLiteDatabase(path: folder.url.appendingPathComponent("sessions.sqlite").path, synchronous: false)
        #expect(try Self.synchronousSetting(of: database) == .integer(1), "synchronous = NORMAL")
    }
}

import Foundation
import Relata
@testable import RelataServer
import RelataServerTestSupport
import RelataTestSupport
import Synchronization
import Testing

/// A SQLite file's asynchronous reads run on lanes with read-only connections of their own
/// (`SQLiteReadLanes`): never more at once than the lanes, every read run, one that blocks
/// holding only its lane, each in one snapshot, and the same answers and errors as GRDB's reads.
@Suite(.timeLimit(.minutes(2))) struct SQLiteReadLanesTests {
    static let number = FieldDefinition("n", .integer)

    /// A file with table `t` holding `n` = 1…`rows`, read by `lanes` lanes.
    static func database(rows: Int = 3, lanes: Int = 2) throws -> (SQLiteDatabase, TemporaryFolder) {
        let folder = try TemporaryFolder()
        let database = try SQLiteDatabase(path: folder.url.appendingPathComponent("lanes.sqlite").path, synchronous: false, maxReaders: lanes)
        try database.inTransaction { connection in
            try connection.execute("CREATE TABLE t (n INTEGER)", [])
            for n in 1...rows { try connection.execute("INSERT INTO t VALUES (?1)", [.integer(Int64(n))]) }
        }
        return (database, folder)
    }

    @Test func manyMoreReadsThanLanesAllRunAndNeverMoreAtOnceThanTheLanes() async throws {
        let (database, folder) = try Self.database(lanes: 2)
        defer { withExtendedLifetime(folder) {} }
        let running = Running()
        let sums = try await withThrowingTaskGroup(of: Value?.self) { group in
            for _ in 0..<40 {
                group.addTask {
                    try await database.asyncRead { connection in
                        running.counts.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
                        defer { running.counts.withLock { $0.now -= 1 } }
                        // Some work, so that reads overlap.
                        return try connection.value("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 20000) SELECT SUM(i) FROM c",
                                                    [], reading: Self.number)
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(sums.count == 40)
        #expect(sums.allSatisfy { $0 == .integer(200_010_000) })
        let most = running.counts.withLock { $0.most }
        #expect(most <= 2 && most >= 1, "at most two reads at once, on two lanes: \(most)")
        #expect(database.connectionsInUse == 0)
    }

    /// How many reads run now, and the most that ran at once.
    final class Running: Sendable {
        let counts = Mutex((now: 0, most: 0))
    }

    @Test func aReadThatBlocksHoldsOnlyItsOwnLane() async throws {
        let (database, folder) = try Self.database(lanes: 2)
        defer { withExtendedLifetime(folder) {} }
        let started = ConditionFlag(), release = ConditionFlag()
        async let blocked: Value? = database.asyncRead { connection in
            started.set()
            try release.require(within: .seconds(240), "the release of the blocking read")
            return try connection.value("SELECT COUNT(*) FROM t", [], reading: Self.number)
        }
        // Generous: the read starts from a task, and a loaded machine's cooperative threads can be
        // held up for tens of seconds by the tests beside this one.
        let deadline = ContinuousClock.now + .seconds(120)
        while !started.isSet, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(started.isSet, "the blocking read started")
        for _ in 0..<20 {
            let count = try await database.asyncRead { try $0.value("SELECT COUNT(*) FROM t", [], reading: Self.number) }
            #expect(count == 3)
        }
        release.set()
        #expect(try await blocked == 3)
    }

    /// A read is one snapshot: a write committed while it runs is not seen by its later
    /// statements (each statement on its own would see it), and the next read sees it.
    @Test func aReadSeesOneSnapshot() async throws {
        let (database, folder) = try Self.database(lanes: 1)
        defer { withExtendedLifetime(folder) {} }
        let (before, after) = try await database.asyncRead { connection in
            let before = try connection.value("SELECT COUNT(*) FROM t", [], reading: Self.number)
            try database.inTransaction { try $0.execute("INSERT INTO t VALUES (99)", []) }
            return (before, try connection.value("SELECT COUNT(*) FROM t", [], reading: Self.number))
        }
        #expect(before == 3)
        #expect(after == 3, "the same snapshot for the whole read")
        #expect(try await database.asyncRead { try $0.value("SELECT COUNT(*) FROM t", [], reading: Self.number) } == 4)
    }

    @Test func aReadCannotWriteNorEndItsTransaction() async throws {
        let (database, folder) = try Self.database()
        defer { withExtendedLifetime(folder) {} }
        await #expect { try await database.asyncRead { try $0.execute("INSERT INTO t VALUES (5)", []) } } throws: { error in
            "\(error)".contains("readonly")
        }
        await #expect(throws: SQLError.self) { try await database.asyncRead { try $0.commit() } }
        await #expect(throws: SQLError.self) { try await database.asyncRead { try $0.begin() } }
        // Nothing was written, and the lanes go on reading.
        #expect(try await database.asyncRead { try $0.value("SELECT COUNT(*) FROM t", [], reading: Self.number) } == 3)
    }

    @Test func errorsAreSQLiteWordsAndTheLaneGoesOn() async throws {
        let (database, folder) = try Self.database(lanes: 1)
        defer { withExtendedLifetime(folder) {} }
        await #expect { try await database.asyncRead { try $0.rows("SELECT n FROM Nope", [], reading: [Self.number]) } } throws: { error in
            "\(error)".contains("no such table: Nope")
        }
        await #expect { try await database.asyncRead { try $0.rows("SELECT n FROM t WHERE n = ?1", [], reading: [Self.number]) } } throws: { error in
            "\(error)".contains("takes 1 values, not 0")
        }
        #expect(try await database.asyncRead { try $0.rows("SELECT n FROM t ORDER BY n", [], reading: [Self.number]) }.count == 3)
    }

    /// DA SQL's `LIKE` is Relata's own matcher on the lanes' connections too: case folded across Unicode.
    @Test func likeIsRelatasOwnMatcher() async throws {
        let (database, folder) = try Self.database()
        defer { withExtendedLifetime(folder) {} }
        let matches = try await database.asyncRead { connection in
            try ["SELECT relata_like('Ångström', 'åNG%', NULL)", "SELECT relata_like('50%', '50!%', '!')",
                 "SELECT relata_like('500', '50!%', '!')", "SELECT relata_like(NULL, 'a', NULL)", "SELECT relata_like(12, '1%', NULL)"]
                .map { try connection.value($0, [], reading: Self.number) }
        }
        #expect(matches == [.integer(1), .integer(1), .integer(0), .null, .null])
        let sameAsGRDB = try database.read { try $0.value("SELECT relata_like(12, '1%', NULL)", [], reading: Self.number) }
        #expect(sameAsGRDB == .null)
    }

    @Test func aRunawayQueryIsStoppedByItsLimitAndTheLaneGoesOn() async throws {
        let (database, folder) = try Self.database(lanes: 1)
        defer { withExtendedLifetime(folder) {} }
        let limit = WorkLimit(timeLimit: .milliseconds(200))
        await #expect { try await database.asyncRead { connection in
            try connection.limiting(limit) {
                try connection.value("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c) SELECT MAX(i) FROM c", [], reading: Self.number)
            }
        } } throws: { error in
            (error as? SQLError)?.kind == .timeLimitExceeded
        }
        let cancelled = WorkLimit(timeLimit: nil)
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await database.asyncRead { connection in
            try connection.limiting(cancelled) {
                try connection.value("WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c) SELECT MAX(i) FROM c", [], reading: Self.number)
            }
        } }
        #expect(try await database.asyncRead { try $0.value("SELECT COUNT(*) FROM t", [], reading: Self.number) } == 3)
    }

    /// The code a row is handed to may run the same query again, and more distinct statements
    /// than a connection keeps: the rows being handed out go on from where they were.
    @Test func aQueryRunWhileItsRowsAreHandedOutLeavesThemAsTheyWere() async throws {
        let (database, folder) = try Self.database(rows: 5, lanes: 1)
        defer { withExtendedLifetime(folder) {} }
        let (outer, inner) = try await database.asyncRead { connection in
            var outer: [Value] = [], inner: [Int] = []
            try connection.query("SELECT n FROM t ORDER BY n", [], reading: [Self.number]) { row in
                outer.append(row[0])
                inner.append(try connection.rows("SELECT n FROM t ORDER BY n", [], reading: [Self.number]).count)
                for other in 0..<(SQLiteReadConnection.keptLimit + 5) {
                    _ = try connection.value("SELECT \(other) + n FROM t WHERE n = 1", [], reading: Self.number)
                }
                return true
            }
            return (outer, inner)
        }
        #expect(outer == (1...5).map { .integer(Int64($0)) })
        #expect(inner == [5, 5, 5, 5, 5])
    }

    /// A private in-memory database has no file for lanes to open: its reads stay GRDB's.
    @Test func anInMemoryDatabaseReadsWithoutLanes() async throws {
        let database = try SQLiteDatabase(path: ":memory:")
        try database.inTransaction { try $0.execute("CREATE TABLE t (n INTEGER)", []) }
        #expect(try await database.asyncRead { try $0.value("SELECT COUNT(*) FROM t", [], reading: Self.number) } == 0)
    }
}

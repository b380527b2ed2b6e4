import Foundation
import Relata
@testable import RelataServer
import RelataServerTestSupport
import RelataTestSupport
import Synchronization
import Testing

/// Grouped writes of a SQLite file share durable commits (`SQLiteGroupCommit`): each write's
/// changes stand or fall alone — a rollback, a foreign key it breaks, a savepoint it leaves
/// open — and nobody sees them, nor hears they are durable, before the shared commit.
@Suite(.timeLimit(.minutes(2))) struct SQLiteGroupCommitTests {
    static let number = FieldDefinition("n", .integer)

    /// A file whose groups stay open for as long as `maximumAge`: long enough by default for
    /// a test's writes to join whatever the machine's load.
    static func database(maximumAge: Duration = .seconds(60)) throws -> (SQLiteDatabase, TemporaryFolder) {
        let folder = try TemporaryFolder()
        let database = try SQLiteDatabase(path: folder.url.appendingPathComponent("group.sqlite").path,
                                          groups: SQLiteGroupCommit(maximumAge: maximumAge))
        try database.inTransaction { connection in
            try connection.execute("CREATE TABLE t (n INTEGER PRIMARY KEY)", [])
            try connection.execute("CREATE TABLE parent (id INTEGER PRIMARY KEY)", [])
            try connection.execute("CREATE TABLE child (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parent (id))", [])
            try connection.execute("INSERT INTO parent VALUES (1)", [])
        }
        return (database, folder)
    }

    /// A grouped write of `sql` with `arguments`, committed as a delta store commits it.
    static func insert(_ sql: String, _ arguments: [Value], into database: SQLiteDatabase) throws -> PendingCommit {
        try database.groupedWrite { connection in
            try connection.begin()
            return try connection.committing { try $0.execute(sql, arguments) }
        }.1
    }

    static func stored(_ table: String, in database: SQLiteDatabase) async throws -> [Int64] {
        try await database.asyncRead { connection in
            try connection.rows("SELECT * FROM \(table) ORDER BY 1", [], reading: [Self.number]).compactMap { row -> Int64? in
                if case .integer(let n) = row[0] { return n } else { return nil }
            }
        }
    }

    /// Starts a grouped write on a thread of its own whose work holds the writer until
    /// `release` is set, so that the writes started after it queue up behind it.
    static func holdingTheWriter(_ database: SQLiteDatabase, inserting n: Int64, release: ConditionFlag) async throws -> OnThread<PendingCommit> {
        let started = ConditionFlag()
        let write = OnThread {
            try database.groupedWrite { connection in
                try connection.begin()
                try connection.execute("INSERT INTO t VALUES (?1)", [.integer(n)])
                started.set()
                try release.require(within: .seconds(60), "the release of the first write")
                try connection.commit()
            }.1
        }
        #expect(await Self.becomes { started.isSet }, "the first write holds the writer")
        return write
    }

    /// Waits (at most 30 s) until `condition` holds. What it waits for runs on threads of its
    /// own, never on Swift's cooperative threads, which the tests running beside may hold.
    static func becomes(_ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return true
    }

    /// Runs `write` on a thread of its own; waits until it waits for the writer.
    static func queued(_ database: SQLiteDatabase, _ write: @escaping @Sendable () throws -> PendingCommit) async -> OnThread<PendingCommit> {
        let groups = try! #require(database.groups)
        let before = groups.waitingCount
        let thread = OnThread(write)
        #expect(await Self.becomes { groups.waitingCount > before }, "the write waits for the writer")
        return thread
    }

    @Test(arguments: [Duration.seconds(60), .zero])
    func writesArrivingTogetherShareACommitWhileTheGroupIsYoungAndAreAllStored(maximumAge: Duration) async throws {
        let (database, folder) = try Self.database(maximumAge: maximumAge)
        defer { withExtendedLifetime(folder) {} }
        let groups = try #require(database.groups)
        let commitsBefore = groups.commitCount
        let release = ConditionFlag()
        let first = try await Self.holdingTheWriter(database, inserting: 0, release: release)
        var others: [OnThread<PendingCommit>] = []
        for n in 1...20 {
            others.append(await Self.queued(database) { try Self.insert("INSERT INTO t VALUES (?1)", [.integer(Int64(n))], into: database) })
        }
        release.set()
        for write in [first] + others { try await write.value.durable() }
        #expect(try await Self.stored("t", in: database) == Array(0...20))
        let commits = groups.commitCount - commitsBefore
        // Young enough, the group takes every write that waits; at once too old, none.
        #expect(commits == (maximumAge == .zero ? 21 : 1), "21 writes that came together took \(commits) commits")
    }

    @Test func nobodySeesAWriteNorHearsItIsDurableBeforeTheSharedCommit() async throws {
        let (database, folder) = try Self.database()
        defer { withExtendedLifetime(folder) {} }
        let releaseFirst = ConditionFlag(), releaseSecond = ConditionFlag(), secondStarted = ConditionFlag()
        let first = try await Self.holdingTheWriter(database, inserting: 1, release: releaseFirst)
        // The second queues behind the first, so the first leaves the group open for it; its
        // own work then holds the writer until told to end.
        let second = await Self.queued(database) {
            try database.groupedWrite { connection in
                try connection.begin()
                try connection.execute("INSERT INTO t VALUES (2)", [])
                secondStarted.set()
                try releaseSecond.require(within: .seconds(60), "the release of the second write")
                try connection.commit()
            }.1
        }
        releaseFirst.set()
        let firstCommit = try await first.value   // its work is done, its savepoint released
        #expect(await Self.becomes { secondStarted.isSet })
        let heard = Mutex(false)
        let listener = Task { try await firstCommit.durable(); heard.withLock { $0 = true } }
        try await Task.sleep(for: .milliseconds(50))
        #expect(!heard.withLock { $0 }, "the first write is not durable while its group is open")
        #expect(try await Self.stored("t", in: database) == [], "a reader does not see the open group's rows")
        releaseSecond.set()
        try await listener.value
        try await second.value.durable()
        #expect(try await Self.stored("t", in: database) == [1, 2])
    }

    @Test func aWriteRolledBackOrLeftOpenInAGroupTakesNothingOfTheOthersWithIt() async throws {
        let (database, folder) = try Self.database()
        defer { withExtendedLifetime(folder) {} }
        let release = ConditionFlag()
        let first = try await Self.holdingTheWriter(database, inserting: 1, release: release)
        struct Refused: Error {}
        let rolledBack = await Self.queued(database) {
            try database.groupedWrite { connection in
                try connection.begin()
                try connection.committing { connection in
                    try connection.execute("INSERT INTO t VALUES (2)", [])
                    throw Refused()
                }
            }.1
        }
        let leftOpen = await Self.queued(database) {
            try database.groupedWrite { connection in
                try connection.begin()
                try connection.execute("INSERT INTO t VALUES (3)", [])   // never committed
            }.1
        }
        let duplicate = await Self.queued(database) { try Self.insert("INSERT INTO t VALUES (1)", [], into: database) }
        let last = await Self.queued(database) { try Self.insert("INSERT INTO t VALUES (4)", [], into: database) }
        release.set()
        try await first.value.durable()
        await #expect(throws: Refused.self) { try await rolledBack.value }
        try await leftOpen.value.durable()
        await #expect(throws: SQLError.self) { try await duplicate.value }
        try await last.value.durable()
        #expect(try await Self.stored("t", in: database) == [1, 4])
    }

    @Test func aForeignKeyBrokenByOneWriteFailsOnlyThatWrite() async throws {
        let (database, folder) = try Self.database()
        defer { withExtendedLifetime(folder) {} }
        let release = ConditionFlag()
        let first = try await Self.holdingTheWriter(database, inserting: 1, release: release)
        // Deferred, as a delta store defers them: without a check at the write's own commit the
        // shared COMMIT would refuse the whole group.
        let orphan = await Self.queued(database) {
            try database.groupedWrite { connection in
                try connection.begin()
                try connection.committing { connection in
                    try connection.execute("PRAGMA defer_foreign_keys = ON", [])
                    try connection.execute("INSERT INTO child VALUES (1, 99)", [])
                }
            }.1
        }
        let child = await Self.queued(database) { try Self.insert("INSERT INTO child VALUES (2, 1)", [], into: database) }
        release.set()
        try await first.value.durable()
        do {
            _ = try await orphan.value
            Issue.record("a child of a missing parent was stored")
        } catch let error as SQLError {
            #expect(error.kind == .constraint, "\(error)")
        }
        try await child.value.durable()
        #expect(try await Self.stored("child", in: database) == [2])
        #expect(try await Self.stored("t", in: database) == [1])
    }

    /// A grouped write defers its foreign keys as a delta store does (`deferForeignKeys()`):
    /// the pragma is set once per shared transaction — setting it expires every prepared
    /// statement — so it must hold for every write of the group, and be set again in the next.
    @Test func foreignKeysStayDeferredForEveryWriteOfAGroupAndTheNextGroup() async throws {
        let (database, folder) = try Self.database()
        defer { withExtendedLifetime(folder) {} }
        /// A child inserted before its parent: stored only while foreign keys are deferred.
        @Sendable func childFirst(_ child: Int64, parent: Int64?) throws -> PendingCommit {
            try database.groupedWrite { connection in
                try connection.begin()
                return try connection.committing { connection in
                    try connection.deferForeignKeys()
                    try connection.execute("INSERT INTO child VALUES (?1, ?2)", [.integer(child), .integer(parent ?? 99)])
                    if let parent { try connection.execute("INSERT INTO parent VALUES (?1)", [.integer(parent)]) }
                }
            }.1
        }
        let release = ConditionFlag()
        let first = try await Self.holdingTheWriter(database, inserting: 1, release: release)
        let setsThePragma = await Self.queued(database) { try childFirst(10, parent: 2) }
        let findsItSet = await Self.queued(database) { try childFirst(11, parent: 3) }
        let orphan = await Self.queued(database) { try childFirst(12, parent: nil) }
        release.set()
        for write in [first, setsThePragma, findsItSet] { try await write.value.durable() }
        await #expect(throws: SQLError.self, "a child of a missing parent fails its own write") { try await orphan.value }
        try await OnThread { try childFirst(13, parent: 4) }.value.durable()   // a transaction of its own: the pragma set again
        #expect(try await Self.stored("child", in: database) == [10, 11, 13])
        #expect(try await Self.stored("parent", in: database) == [1, 2, 3, 4])
    }

    /// A write that goes on to tell of its commit (a rule's `afterCommit`) commits the group
    /// there and then: its own changes and the earlier writes' are durable before it goes on.
    @Test func aDurableCommitInAGroupCommitsTheGroupAtOnce() async throws {
        let (database, folder) = try Self.database()
        defer { withExtendedLifetime(folder) {} }
        let release = ConditionFlag()
        let first = try await Self.holdingTheWriter(database, inserting: 1, release: release)
        let seenAfterCommit = Mutex<[Int64]?>(nil)
        let durable = await Self.queued(database) {
            try database.groupedWrite { connection in
                try connection.begin()
                try connection.execute("INSERT INTO t VALUES (2)", [])
                try connection.commitDurably()
                // What another connection sees now, before this write's work ends.
                let seen = try database.read { try $0.rows("SELECT n FROM t ORDER BY n", [], reading: [Self.number]) }
                seenAfterCommit.withLock { $0 = seen.compactMap { if case .integer(let n) = $0[0] { n } else { nil } } }
            }.1
        }
        let later = await Self.queued(database) { try Self.insert("INSERT INTO t VALUES (3)", [], into: database) }
        release.set()
        try await first.value.durable()
        try await durable.value.durable()
        try await later.value.durable()
        #expect(seenAfterCommit.withLock { $0 } == [1, 2], "the earlier write's row and its own were committed")
        #expect(try await Self.stored("t", in: database) == [1, 2, 3])
    }

    @Test func aWriteThatIsNotGroupedCommitsTheOpenGroupFirst() async throws {
        let (database, folder) = try Self.database()
        defer { withExtendedLifetime(folder) {} }
        let release = ConditionFlag()
        let first = try await Self.holdingTheWriter(database, inserting: 1, release: release)
        let grouped = await Self.queued(database) { try Self.insert("INSERT INTO t VALUES (2)", [], into: database) }
        let plain = OnThread { try database.inTransaction { try $0.execute("INSERT INTO t VALUES (3)", []) } }
        let another = await Self.queued(database) { try Self.insert("INSERT INTO t VALUES (4)", [], into: database) }
        release.set()
        _ = try await plain.value
        for write in [first, grouped, another] { try await write.value.durable() }
        #expect(try await Self.stored("t", in: database) == [1, 2, 3, 4])
        #expect(try database.write { try $0.value("SELECT COUNT(*) FROM t", [], reading: Self.number) } == .integer(4))
    }
}

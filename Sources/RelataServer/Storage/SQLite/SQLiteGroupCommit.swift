import GRDB
import Synchronization

/// Grouped writes of one SQLite file share their durable commits. A commit that waits for the
/// disk costs more than a small apply's own work, and the file has one writer: commits one at
/// a time bound its applies a second to the disk's syncs a second. So a grouped write's
/// `begin` opens a savepoint in a transaction the group shares (opening it when none is), its
/// `commit` releases the savepoint, and the transaction is committed when the write that ends
/// sees no grouped write waiting for the writer — or before a write starts once the group is
/// ``maximumMembers`` strong or ``maximumAge`` old, and before any other write. Each write
/// learns of the shared commit through its ``PendingCommit``; a write rolled back rolls back
/// only its savepoint.
///
/// Used on the file's writer only, one write at a time (GRDB's writer queue serializes them).
final class SQLiteGroupCommit: Sendable {
    /// The most writes one commit serves.
    let maximumMembers: Int
    /// The longest a group stays open to let more writes in (it never ends in the middle of one):
    /// the most a write's answer waits for the writes after it, beyond the last one's own work.
    let maximumAge: Duration

    init(maximumMembers: Int = 64, maximumAge: Duration = .milliseconds(5)) {
        self.maximumMembers = maximumMembers
        self.maximumAge = maximumAge
    }

    /// Grouped writes waiting for the writer now: while one does, the group stays open for it.
    private let waiting = Atomic<Int>(0)
    private let open = Mutex<OpenGroup?>(nil)
    private let commits = Atomic<Int>(0)
    private let deferred = Atomic<Bool>(false)

    /// Whether the shared transaction checks foreign keys at its commit already
    /// (``SQLiteConnection/deferForeignKeys()``); set and read on the writer only.
    var foreignKeysDeferred: Bool {
        get { deferred.load(ordering: .relaxed) }
        set { deferred.store(newValue, ordering: .relaxed) }
    }

    /// Grouped writes waiting for the writer now.
    var waitingCount: Int { waiting.load(ordering: .relaxed) }
    /// Shared transactions committed so far.
    var commitCount: Int { commits.load(ordering: .relaxed) }

    private struct OpenGroup {
        let commit = CommitGroup()
        let opened = ContinuousClock.now
        var members = 0
    }

    /// A grouped write starts waiting for the writer.
    func arriving() { waiting.add(1, ordering: .relaxed) }

    /// A grouped write that waited gave up before it reached the writer.
    func leftWithoutWriting() { waiting.subtract(1, ordering: .relaxed) }

    /// Runs a grouped write's `work` on the writer's connection `db`, and says which commit its
    /// changes wait for.
    func run<Result>(on db: Database, _ work: (SQLiteConnection) throws -> Result) throws -> (Result, PendingCommit) {
        waiting.subtract(1, ordering: .relaxed)
        if let group = open.withLock({ $0 }), group.members >= maximumMembers || ContinuousClock.now - group.opened >= maximumAge {
            commitOpenGroup(on: db)
        }
        let connection = SQLiteConnection(db, group: self)
        let result: Result
        do {
            result = try work(connection)
            connection.abandonOpenSavepoint()
        } catch {
            connection.abandonOpenSavepoint()
            _ = joinOrCommit(on: db)
            throw error
        }
        return (result, joinOrCommit(on: db))
    }

    /// Commits the open group's transaction, if any, and tells its writes how it went: before a
    /// write that is not grouped, when a grouped write must be durable before it goes on
    /// (``SQLiteConnection/commitDurably()``), and when the database closes.
    @discardableResult
    func commitOpenGroup(on db: Database) -> Result<Void, any Error> {
        let group = open.withLock { group in defer { group = nil }; return group }
        let result: Result<Void, any Error>
        if !db.isInsideTransaction {
            result = group == nil ? .success(()) : .failure(Self.lost)
        } else {
            do {
                try SQLiteConnection.run("COMMIT", on: db)
                commits.add(1, ordering: .relaxed)
                result = .success(())
            } catch {
                if db.isInsideTransaction { try? SQLiteConnection.run("ROLLBACK", on: db) }
                result = .failure(SQLiteConnection.mapped(error))
            }
        }
        group?.commit.end(result)
        return result
    }

    /// After a grouped write's work: its changes join the open group, whose transaction is
    /// committed now unless another grouped write waits to join it too.
    private func joinOrCommit(on db: Database) -> PendingCommit {
        let joined: CommitGroup? = open.withLock { group in
            if db.isInsideTransaction {
                if group == nil { group = OpenGroup() }
                group?.members += 1
                return group?.commit
            }
            if let lost = group {   // SQLite rolled the shared transaction back (a full disk, an I/O error)
                group = nil
                lost.commit.end(.failure(Self.lost))
                return lost.commit
            }
            return nil
        }
        guard let joined else { return .committed }
        if waiting.load(ordering: .relaxed) == 0 { commitOpenGroup(on: db) }
        return PendingCommit(joined)
    }

    static let lost = SQLError(.other, "the transaction these changes shared with others was rolled back by the database before its commit; nothing of them was stored")
}

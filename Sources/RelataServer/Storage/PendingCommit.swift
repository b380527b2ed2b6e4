import Synchronization

/// The commit a write's changes wait for before they are durable: none for most writes (they
/// committed before the write returned), and for a grouped write (``SQLDatabase/groupedWrite(_:)``)
/// the one commit it shares with the writes that came with it. Answer nobody about the changes
/// before ``durable()`` returns.
///
/// ```swift
/// let (stored, commit) = try storage.groupedWrite { connection in
///     try connection.begin()
///     return try connection.committing { try $0.execute("INSERT INTO Notes VALUES (?1)", [.string("hello")]) }
/// }
/// try await commit.durable()   // now the note is on disk: answer the client
/// ```
public struct PendingCommit: Sendable {
    private let group: CommitGroup?

    init(_ group: CommitGroup?) {
        self.group = group
    }

    /// Nothing left to wait for: the changes were committed before the write returned.
    public static let committed = PendingCommit(nil)

    /// Returns once the changes are on disk.
    ///
    /// - Throws: the error of the shared commit when it failed: then none of the write's
    ///   changes were stored, whatever the write returned.
    public func durable() async throws {
        try await group?.outcome()
    }
}

/// The writes that share one commit, and the tasks waiting to hear how it went.
final class CommitGroup: Sendable {
    private enum State {
        case open(waiting: [CheckedContinuation<Void, any Error>])
        case ended(Result<Void, any Error>)
    }

    private let state = Mutex(State.open(waiting: []))

    /// Tells every waiting task (and every later one) how the commit went; only the first call counts.
    func end(_ result: Result<Void, any Error>) {
        let waiting: [CheckedContinuation<Void, any Error>] = state.withLock { state in
            guard case .open(let waiting) = state else { return [] }
            state = .ended(result)
            return waiting
        }
        for continuation in waiting { continuation.resume(with: result) }
    }

    /// Waits for the commit; throws its error when it failed.
    func outcome() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let ended: Result<Void, any Error>? = state.withLock { state in
                switch state {
                case .open(var waiting):
                    state = .open(waiting: [])   // the array taken out, so that appending does not copy it
                    waiting.append(continuation)
                    state = .open(waiting: waiting)
                    return nil
                case .ended(let result):
                    return result
                }
            }
            if let ended { continuation.resume(with: ended) }
        }
    }
}

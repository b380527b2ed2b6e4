import Dispatch
import Synchronization
import Foundation

/// Where the asynchronous reads of a SQLite file run (a GetData's rows, a DA SQL query): on a
/// few lanes, each a serial queue with a read-only connection of its own
/// (``SQLiteReadConnection``, opened at the lane's first read). A read takes the first free
/// lane; reads that find none wait their turn, first come first served, and a lane that ends a
/// read runs the next waiting one at once, on its own thread. So a read costs one hand-over
/// there and one back, and a read that blocks (a client taking its rows slowly) holds only its
/// own lane — never a thread of Swift's cooperative pool.
///
/// ```swift
/// let lanes = SQLiteReadLanes(path: "shop.sqlite", count: 16)
/// let count = try await lanes.read { try $0.value("SELECT COUNT(*) FROM Clients", [], reading: FieldDefinition("n", .integer)) }
/// ```
final class SQLiteReadLanes: Sendable {
    private let path: String
    private let state: Mutex<State>

    /// A read waiting for a lane: it runs on the lane it is given.
    typealias Job = @Sendable (Lane) -> Void

    private struct State {
        var free: [Lane]
        /// The reads waiting for a lane, first come first served.
        var waiting = FIFO<Job>()
    }

    /// One lane: its queue, and the connection the reads it runs use.
    final class Lane: @unchecked Sendable {
        // @unchecked Sendable: `opened` is used only by the read the lane runs, one at a time, on `queue`.
        let queue: DispatchQueue
        private var opened: SQLiteReadConnection?

        init(number: Int) {
            queue = DispatchQueue(label: "relata.sqlite.read-lane.\(number)")
        }

        /// The lane's connection, opened at its first read (a failed open is tried again at the next).
        func connection(to path: String) throws -> SQLiteReadConnection {
            if let opened { return opened }
            let connection = try SQLiteReadConnection(path: path)
            opened = connection
            return connection
        }
    }

    /// Lanes for the file at `path`: `count` reads at most run at once (at least one).
    init(path: String, count: Int) {
        self.path = path
        state = Mutex(State(free: (0..<max(1, count)).map { Lane(number: $0) }))
    }

    /// Runs `work` in a read transaction on a lane's connection, once a lane is free.
    func read<Result: Sendable>(_ work: @escaping @Sendable (any SQLConnection) throws -> Result) async throws -> Result {
        let path = self.path
        return try await withCheckedThrowingContinuation { continuation in
            submit { lane in
                continuation.resume(with: Swift.Result { try lane.connection(to: path).reading(work) })
            }
        }
    }

    private func submit(_ job: @escaping Job) {
        let lane: Lane? = state.withLock { state in
            if let lane = state.free.popLast() { return lane }
            state.waiting.append(job)
            return nil
        }
        guard let lane else { return }
        lane.queue.async { self.run(job, on: lane) }
    }

    /// Runs `job`, then each read that waits, until none does; then the lane is free.
    private func run(_ job: @escaping Job, on lane: Lane) {
        var next: Job? = job
        while let job = next {
            job(lane)
            next = state.withLock { state in
                guard let waiting = state.waiting.popFirst() else {
                    state.free.append(lane)
                    return nil
                }
                return waiting
            }
        }
    }
}

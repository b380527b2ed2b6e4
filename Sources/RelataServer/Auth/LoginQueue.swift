import Foundation

/// Where logins are checked: password hashing is slow on purpose, so at most `workers` run at
/// once, on threads of their own, and at most `waiting` more wait in line. A login beyond that
/// is refused at once (``Full``, answered 503 with `Retry-After`) rather than queued for ever —
/// a flood of logins slows other logins, never session lookups or data requests.
///
/// ```swift
/// let queue = LoginQueue(workers: 1, waiting: 16)
/// let session = try await queue.run { try provider.authenticate(login) }
/// ```
final class LoginQueue: @unchecked Sendable {
    // @unchecked Sendable: `running` and `pending` are read and written only while `lock` is held.
    let workers: Int
    let waiting: Int
    private let lock = NSLock()
    private var running = 0
    private var pending: [@Sendable () -> Void] = []
    private let threads = DispatchQueue(label: "relata.logins", attributes: .concurrent)

    /// Every worker is busy and the line is full.
    struct Full: Error, Sendable {}

    init(workers: Int, waiting: Int) {
        self.workers = max(1, workers)
        self.waiting = max(0, waiting)
    }

    /// Runs `work` on a login thread when one is free.
    ///
    /// - Throws: ``Full`` at once when the line is full; what `work` throws.
    func run<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            let job: @Sendable () -> Void = { continuation.resume(with: Swift.Result { try work() }) }
            let admission: Admission = lock.withLock {
                if running < workers {
                    running += 1
                    return .now
                }
                guard pending.count < waiting else { return .refused }
                pending.append(job)
                return .later
            }
            switch admission {
            case .now: start(job)
            case .later: break
            case .refused: continuation.resume(throwing: Full())
            }
        }
    }

    private enum Admission { case now, later, refused }

    private func start(_ job: @escaping @Sendable () -> Void) {
        threads.async {
            job()
            self.finished()
        }
    }

    /// A worker is free: it takes the next login in line, or stops.
    private func finished() {
        let next: (@Sendable () -> Void)? = lock.withLock {
            guard !pending.isEmpty else {
                running -= 1
                return nil
            }
            return pending.removeFirst()
        }
        if let next { start(next) }
    }
}

import Relata

/// A request made the original's way: created (started at once, or configured first), it
/// runs while the caller goes on, and reports through closures and a delegate.
///
/// ```swift
/// let request = adapter.beginGetDataTable("Orders", start: false)
/// request.context = "first load"
/// request.progress = { progress in bar.value = progress.fractionCompleted }
/// request.completion = { orders, request in show(orders) }
/// request.failure = { error, request in report(error) }
/// request.start()            // callbacks arrive on the actor that called start()
/// // …
/// request.cancel()           // the failure closure gets a CancellationError
/// ```
///
/// A request belongs to the isolation of its adapter, like the adapter's tables: `start()`
/// runs it there, so its closures and the delegate are called there, one at a time.
/// ``startInBackground()`` runs it at background priority, detached from the task that
/// started it (not cancelled with it); its callbacks still arrive on the adapter's isolation,
/// since that is where the tables live. Network waits never hold that isolation.
public final class AsyncRequest<Result> {
    /// Anything the caller wants to find again in the callbacks.
    public var context: Any?
    /// Hears the request's callbacks, besides the adapter's own delegate; kept alive (strongly)
    /// while the request runs.
    public var delegate: (any RemoteDataAdapterDelegate)?
    /// Called with the result when the request succeeds.
    public var completion: ((Result, AsyncRequest<Result>) -> Void)?
    /// Called when the request fails or is cancelled.
    public var failure: ((any Error, AsyncRequest<Result>) -> Void)?
    /// Called as a download makes progress.
    public var progress: ((FetchProgress) -> Void)?

    /// The result, once the request succeeded.
    public private(set) var result: Result?
    /// The error, once the request failed.
    public private(set) var error: (any Error)?
    /// Whether ``start()`` or ``startInBackground()`` was called.
    public var isStarted: Bool { task != nil }
    /// Whether the request finished (succeeded, failed or was cancelled).
    public private(set) var isDone = false
    /// Whether ``cancel()`` was called.
    public private(set) var isCancelled = false

    /// The adapter the request runs on.
    private let adapter: RemoteDataAdapter
    /// The request's work, run isolated to the actor that started it.
    private let work: @Sendable (AsyncRequest<Result>, RemoteDataAdapter, isolated any Actor) async throws -> Result
    private var task: Task<Void, Never>?

    init(adapter: RemoteDataAdapter, _ work: @escaping @Sendable (AsyncRequest<Result>, RemoteDataAdapter, isolated any Actor) async throws -> Result) {
        self.adapter = adapter
        self.work = work
    }

    /// Starts the request on the caller's actor (the main actor, in an app); a second call does nothing.
    public func start(isolation: isolated (any Actor) = #isolation) {
        guard task == nil else { return }
        task = Task {
            await run(isolation: isolation)
        }
    }

    /// Starts the request at background priority, detached from the calling task; callbacks
    /// arrive on the caller's actor all the same (see the type's discussion).
    public func startInBackground(isolation: isolated (any Actor) = #isolation) {
        guard task == nil else { return }
        task = Task(priority: .background) {
            await run(isolation: isolation)
        }
    }

    /// Cancels the request: a download stops, a sent apply's answer is still merged if it arrives
    /// (the server may have applied it). The failure closure hears a `CancellationError`.
    public func cancel() {
        isCancelled = true
        task?.cancel()
    }

    private func run(isolation: isolated any Actor) async {
        do {
            try Task.checkCancellation()
            let value = try await work(self, adapter, isolation)
            result = value
            isDone = true
            completion?(value, self)
        } catch {
            self.error = error
            isDone = true
            failure?(error, self)
        }
        delegate = nil
    }
}

@available(*, unavailable, message: "An AsyncRequest belongs to the isolation of its adapter.")
extension AsyncRequest: Sendable {}

import Dispatch
import FuzzSupport

/// UpdateData requests, as a hostile client with a valid login could send them, applied by an
/// in-process `DataService` over SQLite with row and delta rules (``UpdateDataHarness``, which
/// `UpdateDataCorpusTests` also runs over the committed corpus in every test run). An input is
/// read as a small program that writes a request (see `UpdateDataRequestWriter`); one beginning
/// with `{` is the request's JSON itself. Two things must hold for every input: nothing traps, and
/// afterwards the stored rows are the rows before with exactly the answer's resolved changes
/// made — nothing stored twice, nothing the answer calls failed stored, nothing resolved missing.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzUpdateData(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let request = UpdateDataHarness.request(from: [UInt8](fuzzData(start, count))) else { return 0 }
    if let problem = blocking({ await harness.apply(request.deltas, apply: request.apply) }) ?? nil { fatalError(problem) }
    return 0
}

/// The service, made once for the whole run: its tables keep what earlier inputs stored.
private let harness: UpdateDataHarness = {
    do {
        return try UpdateDataHarness()
    } catch {
        fatalError("the fuzz harness could not start: \(error)")
    }
}()

/// Runs async work to its end from the fuzzer's synchronous entry point.
private func blocking<Result: Sendable>(_ work: @escaping @Sendable () async -> Result) -> Result? {
    let done = DispatchSemaphore(value: 0)
    let box = Box<Result>()
    Task {
        box.value = await work()
        done.signal()
    }
    done.wait()
    return box.value
}

private final class Box<Value>: @unchecked Sendable {
    // @unchecked Sendable: written by one task before the semaphore is signalled, read after the wait.
    var value: Value?
}

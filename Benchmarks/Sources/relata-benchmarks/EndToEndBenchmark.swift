// Issue 29's first target as a user meets it: a `RemoteDataAdapter` edits 100,000 rows in one
// `performBatchUpdates` (the row rule running as each row changes) and applies them — validated on the client with the server's
// rules, sent in the form the server reads best, replayed and stored by the server, the answer
// folded back into the table.
import Foundation
import Relata
import RelataRemote

/// One end-to-end round's parts, in seconds.
struct EndToEndRound {
    var edit: Double
    var apply: Double
    var total: Double { edit + apply }
}

private let editsOneByOne = ProcessInfo.processInfo.environment["RELATA_EDIT"] == "single"

/// Edits every row of `Lines` through a new adapter and applies the changes, `repetitions` times
/// (each round fetches the table first, outside the timing); the rounds sorted by their total.
@MainActor func measureEndToEndApply(port: Int, changes: Int, repetitions: Int) async throws -> [EndToEndRound] {
    var rounds: [EndToEndRound] = []
    for _ in 0..<repetitions {
        let adapter = RemoteDataAdapter(targetURL: URL(string: "http://127.0.0.1:\(port)")!, logger: quietLogger)
        adapter.credentials = RemoteCredentials(user: "bench", password: "bench")
        try await adapter.loadSchema()
        let lines = try await adapter.getDataTable("Lines")
        precondition(lines.rowCount >= changes, "\(lines.rowCount) rows of Lines")
        let start = ContinuousClock.now, cpu = processCPUSeconds(), faults = processMinorFaults()
        // As a bulk edit is written: one batch, each edit's rule still run as the row changes
        // (`RELATA_EDIT=single`: each edit on its own, as rounds were measured until 2026-12-07).
        if editsOneByOne {
            try ItemTable.incrementQuantities(of: lines)
        } else {
            try lines.performBatchUpdates { try ItemTable.incrementQuantities(of: lines) }
        }
        let edited = ContinuousClock.now
        let delta = try await adapter.applyChanges(for: lines)
        let applied = ContinuousClock.now
        precondition(delta.changes.count == lines.rowCount && delta.failedChanges.isEmpty && !lines.hasChanges,
                     "\(delta.failedChanges.count) of \(delta.changes.count) changes failed")
        rounds.append(EndToEndRound(edit: (edited - start).seconds, apply: (applied - edited).seconds))
        progress("edited and applied through the adapter: \(milliseconds((applied - start).seconds)), CPU (client and server) \(milliseconds(processCPUSeconds() - cpu)), "
                 + "page faults \(processMinorFaults() - faults); the edit \(milliseconds((edited - start).seconds)), the apply \(milliseconds((applied - edited).seconds))")
    }
    return rounds.sorted { $0.total < $1.total }
}

/// What edits owe their observers whatever the implementation: a `DataTable` posts
/// `tableChangedNotification` and `indexMustUpdateNotification`, with the table as object, after
/// each change made outside `performBatchUpdates`, and once at the end of a batch — two posts
/// through Foundation's `NotificationCenter`, observed by nobody (as in the round). Seconds for
/// `count` edits' posts (or batches').
func notificationFloor(_ count: Int) throws -> Double {
    let table = try DataTable(name: "Lines", fields: ItemTable.fields)
    let byName = times(repetitions: 3) {
        for _ in 0..<count {
            NotificationCenter.default.post(name: DataTable.tableChangedNotification, object: table)
            NotificationCenter.default.post(name: DataTable.indexMustUpdateNotification, object: table)
        }
    }[0]
    // The same notifications made once and posted again and again, in case that is cheaper: the floor is the cheaper way.
    let changed = Notification(name: DataTable.tableChangedNotification, object: table)
    let mustUpdate = Notification(name: DataTable.indexMustUpdateNotification, object: table)
    let prebuilt = times(repetitions: 3) {
        for _ in 0..<count {
            NotificationCenter.default.post(changed)
            NotificationCenter.default.post(mustUpdate)
        }
    }[0]
    return min(byName, prebuilt)
}

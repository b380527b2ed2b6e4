import Foundation
import Relata

/// What one request did, noted as it runs and read once it ends, for its log line and the
/// server's metrics (``RequestLogMiddleware``): who made it, what it read and changed, and how
/// it ended. Every context of the request shares the one record.
final class RequestRecord: @unchecked Sendable {
    // @unchecked Sendable: every stored property is read and written only while `lock` is held.
    private let lock = NSLock()
    private var stored = Facts()

    /// The facts as they stand.
    struct Facts {
        /// The user and domain of the request's session or login.
        var user: String?
        var domain: String?
        /// The service the request reached (`LoginService`, `DataService.PCTrade`), once known to be served.
        var service: String?
        var rowsRead = 0
        var rowsChanged = 0
        /// An apply's or a command's changes by verdict: `resolved`, or the failure's kind.
        var changesByVerdict: [String: Int] = [:]
        /// The protocol's error code of the answer, or of the error that ended a streamed answer.
        var errorCode: String?
        /// How a login ended.
        var login: LoginOutcome?
        /// What the request refused — failed changes, or the request itself — for
        /// ``RecentRefusals`` (at most ``RequestRecord/refusalsKept``).
        var refusals: [RecentRefusals.Refusal] = []
        /// Whether the answer is written as it is made (a long `GetData`): how it ends is known
        /// only once its last byte is written.
        var answerStreams = false
    }

    /// The most refusals one request leaves for ``RecentRefusals``: an apply refused whole would
    /// otherwise push out every other user's.
    static let refusalsKept = 20

    /// How a login ended, as the audit log and the metrics name it.
    enum LoginOutcome: String {
        case succeeded, failed, lockedOut, busy
    }

    var facts: Facts { lock.withLock { stored } }

    func note(_ change: (inout Facts) -> Void) {
        lock.withLock { change(&stored) }
    }

    func noteRowsRead(_ rows: Int) { note { $0.rowsRead += rows } }

    /// Whether the answer streams (read without copying the other facts: every request asks).
    var answerStreams: Bool { lock.withLock { stored.answerStreams } }

    /// Notes a refusal, unless the request has already noted ``refusalsKept``.
    func noteRefusal(_ refusal: RecentRefusals.Refusal) {
        note { facts in
            if facts.refusals.count < Self.refusalsKept { facts.refusals.append(refusal) }
        }
    }
}

extension RequestRecord {
    /// Notes an apply's or a command's changes: how many were stored, and each one's verdict.
    func noteChanges(of deltas: [Delta]) {
        note { facts in
            var resolved = 0
            for delta in deltas {
                for index in delta.changes.indices {   // read in place: a loop over the changes would copy each
                    if delta.changes[index].status == .resolved {
                        resolved += 1
                        continue
                    }
                    let failure = delta.changes[index].failure
                    facts.changesByVerdict[failure?.kind.rawValue ?? delta.changes[index].status.rawValue, default: 0] += 1
                    if let failure, facts.refusals.count < Self.refusalsKept {
                        facts.refusals.append(.init(failure, table: delta.tableName))
                    }
                }
            }
            if resolved > 0 {
                facts.changesByVerdict["resolved", default: 0] += resolved
                facts.rowsChanged += resolved
            }
        }
    }
}

import Foundation
import Relata
import RelataScript
import Synchronization

/// The last refusals this server instance answered — changes an apply or a command failed, and
/// requests refused whole (a permission, a rule) — newest first, for an administrator's view
/// (`AdminService/Overview`, the console's *Server* page). Only the newest ``capacity`` are kept.
///
/// ```swift
/// let recent = RecentRefusals()
/// recent.add([refusal])
/// recent.list(domain: "default").first?.message
/// ```
final class RecentRefusals: Sendable {
    /// One refusal: when, whose, where, and the failure as the client was told it.
    struct Refusal: Sendable, Codable, Hashable {
        var at: Date
        var user: String?
        var domain: String?
        /// The service the request reached (`DataService.PCTrade`).
        var service: String?
        /// The request's id (`X-Request-Id`), to find its lines in the log.
        var requestId: String?
        /// The failure's kind (`refusal`, `ruleError`, `constraint`, …) or, for a request refused
        /// whole, the protocol's error code (`permissionDenied`, `refused`, `ruleError`).
        var kind: String
        var message: String
        var table: String?
        var row: String?
        var event: String?
        var file: String?
        var line: Int?
        var column: Int?
    }

    /// How many refusals are kept.
    let capacity: Int
    private let kept: Mutex<[Refusal]>

    init(capacity: Int = 200) {
        self.capacity = max(1, capacity)
        kept = Mutex([])
    }

    /// Keeps refusals, dropping the oldest past ``capacity``.
    func add(_ refusals: [Refusal]) {
        guard !refusals.isEmpty else { return }
        kept.withLock { kept in
            kept.append(contentsOf: refusals.suffix(capacity))
            if kept.count > capacity { kept.removeFirst(kept.count - capacity) }
        }
    }

    /// The refusals of one domain's users, newest first.
    func list(domain: String) -> [Refusal] {
        kept.withLock { kept in kept.reversed().filter { $0.domain == domain } }
    }
}

extension RecentRefusals.Refusal {
    /// A change's failure, as an apply or a command answered it.
    init(_ failure: ChangeFailure, table: String) {
        self.init(at: Date(), kind: failure.kind.rawValue, message: failure.message, table: failure.table ?? table, row: failure.row,
                  event: failure.event, file: failure.file, line: failure.line, column: failure.column)
    }

    /// A request refused whole — a permission, or a rule that refused or broke — or nil for
    /// any other error. `code` is the error answer's code.
    init?(refusing error: any Error, code: String) {
        switch error {
        case let error as ScriptError:
            self.init(at: Date(), kind: code, message: error.message, table: error.table, row: error.row, event: error.event,
                      file: error.file, line: error.line, column: error.column)
        case let error as RelataError where error.code == .permissionDenied:
            self.init(at: Date(), kind: code, message: error.message, table: error.table)
        default:
            return nil
        }
    }
}

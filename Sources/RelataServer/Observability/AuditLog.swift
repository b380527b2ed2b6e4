import Logging

/// The events an operator audits, each logged once with `audit=<event>` in its metadata, so a
/// log search for `audit=` finds them all: who logged in or failed to, who was refused what,
/// which rules were reloaded, why a server did not start.
public enum AuditEvent: String, Sendable, CaseIterable {
    case loginSucceeded = "login.succeeded"
    case loginFailed = "login.failed"
    case loginLockedOut = "login.lockedOut"
    case permissionDenied = "permission.denied"
    case rulesReloaded = "rules.reloaded"
    case rulesReloadFailed = "rules.reloadFailed"
    case usersReloaded = "users.reloaded"
    case usersReloadFailed = "users.reloadFailed"
    case sessionsEnded = "sessions.ended"
    case startRefused = "start.refused"
    case started = "server.started"
    case stopped = "server.stopped"
}

extension Logger {
    /// Logs an audit event: at `notice`, or at `level` for the ones that need more attention.
    ///
    /// ```swift
    /// logger.audit(.loginFailed, "the password is wrong", metadata: ["user": "ann"])
    /// ```
    public func audit(_ event: AuditEvent, _ message: @autoclosure () -> Logger.Message, level: Logger.Level = .notice,
                      metadata: Logger.Metadata = [:], file: String = #fileID, function: String = #function, line: UInt = #line) {
        var all = metadata
        all["audit"] = .string(event.rawValue)
        log(level: level, message(), metadata: all, file: file, function: function, line: line)
    }
}

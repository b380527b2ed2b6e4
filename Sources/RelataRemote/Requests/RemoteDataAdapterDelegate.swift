import Relata

/// Hears what a ``RemoteDataAdapter`` does, and gives it credentials when the server asks
/// for a login — the original's delegate callbacks, in Swift. Every method has a default
/// that does nothing (and gives no credentials).
///
/// The adapter calls its delegate on the isolation it is used from (the main actor, when an
/// app uses it there), one call at a time.
///
/// ```swift
/// final class Session: RemoteDataAdapterDelegate {
///     func remoteDataAdapter(_ adapter: RemoteDataAdapter, needsLoginAfter refusal: RemoteError?, attempt: Int) async -> RemoteCredentials? {
///         await askUserForPassword(message: refusal?.message)
///     }
///     func remoteDataAdapter(_ adapter: RemoteDataAdapter, didReceiveDataSize progress: FetchProgress) {
///         progressBar.value = progress.fractionCompleted
///     }
/// }
/// ```
public protocol RemoteDataAdapterDelegate: AnyObject {
    /// The server wants a login (no session yet, or it ended): return credentials, or nil to
    /// give up. `refusal` is the server's answer to the previous attempt, if it refused it.
    nonisolated(nonsending) func remoteDataAdapter(_ adapter: RemoteDataAdapter, needsLoginAfter refusal: RemoteError?,
                                                   attempt: Int) async -> RemoteCredentials?
    /// A login succeeded (the original's `verifiedPassword`).
    func remoteDataAdapter(_ adapter: RemoteDataAdapter, didLogInAs user: String, session: Session)
    /// More of a table arrived.
    func remoteDataAdapter(_ adapter: RemoteDataAdapter, didReceiveDataSize progress: FetchProgress)
    /// A table arrived whole.
    func remoteDataAdapter(_ adapter: RemoteDataAdapter, didReceiveTable table: DataTable)
    /// Every table of a request arrived.
    func remoteDataAdapter(_ adapter: RemoteDataAdapter, didReceiveTables tables: [DataTable])
    /// The server processed the changes sent (some may have failed).
    func remoteDataAdapter(_ adapter: RemoteDataAdapter, didApplyChanges deltas: [Delta])
    /// A change failed, on this side or the server's; the row keeps it pending, with its message.
    func remoteDataAdapter(_ adapter: RemoteDataAdapter, didFailChange change: DeltaChange, of table: DataTable)
    /// A refresh found pending changes whose rows changed on the server since they were fetched.
    func remoteDataAdapter(_ adapter: RemoteDataAdapter, didFindConflicts conflicts: [RefreshConflict], in table: DataTable)
    /// A request failed as a whole.
    func remoteDataAdapter(_ adapter: RemoteDataAdapter, didFailWithError error: any Error)
}

extension RemoteDataAdapterDelegate {
    nonisolated(nonsending) public func remoteDataAdapter(_ adapter: RemoteDataAdapter, needsLoginAfter refusal: RemoteError?,
                                                          attempt: Int) async -> RemoteCredentials? { nil }
    public func remoteDataAdapter(_ adapter: RemoteDataAdapter, didLogInAs user: String, session: Session) {}
    public func remoteDataAdapter(_ adapter: RemoteDataAdapter, didReceiveDataSize progress: FetchProgress) {}
    public func remoteDataAdapter(_ adapter: RemoteDataAdapter, didReceiveTable table: DataTable) {}
    public func remoteDataAdapter(_ adapter: RemoteDataAdapter, didReceiveTables tables: [DataTable]) {}
    public func remoteDataAdapter(_ adapter: RemoteDataAdapter, didApplyChanges deltas: [Delta]) {}
    public func remoteDataAdapter(_ adapter: RemoteDataAdapter, didFailChange change: DeltaChange, of table: DataTable) {}
    public func remoteDataAdapter(_ adapter: RemoteDataAdapter, didFindConflicts conflicts: [RefreshConflict], in table: DataTable) {}
    public func remoteDataAdapter(_ adapter: RemoteDataAdapter, didFailWithError error: any Error) {}
}

/// How far a download has come.
public struct FetchProgress: Sendable, Hashable {
    /// The table arriving now.
    public var table: String
    /// Rows of that table received so far.
    public var rowsReceived: Int
    /// The rows the server expects to send for it: exact without a where expression, an
    /// upper bound with one.
    public var expectedRows: Int
    /// Bytes of the whole answer received so far.
    public var bytesReceived: Int

    public init(table: String, rowsReceived: Int, expectedRows: Int, bytesReceived: Int) {
        self.table = table
        self.rowsReceived = rowsReceived
        self.expectedRows = expectedRows
        self.bytesReceived = bytesReceived
    }

    /// Rows received of expected, from 0 to 1 (1 when nothing is expected).
    public var fractionCompleted: Double {
        expectedRows == 0 ? 1 : min(1, Double(rowsReceived) / Double(expectedRows))
    }
}

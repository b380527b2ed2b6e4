import Foundation
import Relata

/// Commands: functions of the server's schema script that a schema declares and enables.
extension RemoteDataAdapter {
    /// Runs a command on the server, as the logged-in user: its function in the schema-wide
    /// script, with the parameters, and what it changes through `lda` applied there with the
    /// tables' rules, in one transaction.
    ///
    /// The adapter's tables are not changed: refresh those the command touched.
    ///
    /// ```swift
    /// let (result, changes) = try await adapter.executeCommand("CloseOrder", parameters: ["orderId": 7])
    /// if changes.contains(where: { $0.tableName == "Orders" }) { try await adapter.refresh(orders) }
    /// ```
    /// - Returns: what the function returned, and the processed deltas of what it changed.
    /// - Throws: ``RemoteError``: ``RemoteError/Kind/permanent`` with `unknownCommand`, `permissionDenied`
    ///   (not enabled, or not for the user's roles) or `refused` (a `fail()`, with its message and location).
    nonisolated(nonsending) public func executeCommand(_ name: String, parameters: [String: Value] = [:]) async throws
        -> (result: Value, changes: [Delta]) {
        let body = try JSONEncoder().encode(ProtocolMessages.CommandRequest(command: name, parameters: parameters))
        let answer = try await call(dataService, "ExecuteCommand", body: body)
        do {
            let message = try JSONDecoder().decode(ProtocolMessages.CommandAnswer.self, from: answer.body)
            return (message.result, message.deltas)
        } catch {
            throw RemoteError.invalidResponse("ExecuteCommand", error)
        }
    }
}

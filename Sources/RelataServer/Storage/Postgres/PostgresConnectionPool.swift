import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// The connections of one ``PostgresDatabase``: opened when needed, up to a maximum, and
/// kept for the next unit of work; a unit that finds them all lent waits for one. A
/// connection that broke while lent is closed and forgotten, never lent again.
final class PostgresConnectionPool: @unchecked Sendable {
    // @unchecked Sendable: `idle` and `open` are read and written only while `condition` is locked;
    // the other properties are constants.
    let logger: Logger
    private let configuration: PostgresConnection.Configuration
    private let maxConnections: Int
    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    private var open = 0
    private var nextID = 0

    init(configuration: PostgresConnection.Configuration, maxConnections: Int, logger: Logger) {
        self.configuration = configuration
        self.maxConnections = maxConnections
        self.logger = logger
    }

    /// Runs `work` with a connection of its own. Called on a thread that may wait (never an event loop).
    func withConnection<Result>(_ work: (PostgresConnection) throws -> Result) throws -> Result {
        let connection = try lease()
        defer { giveBack(connection) }
        return try work(connection)
    }

    func closeAll() {
        condition.lock()
        let closing = idle
        idle = []
        open -= closing.count
        condition.unlock()
        for connection in closing { try? connection.close().wait() }
    }

    private func lease() throws -> PostgresConnection {
        condition.lock()
        while idle.isEmpty && open >= maxConnections { condition.wait() }
        if let connection = idle.popLast() {
            condition.unlock()
            return connection
        }
        open += 1
        nextID += 1
        let id = nextID
        condition.unlock()
        do {
            return try PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration,
                                                  id: id, logger: logger).wait()
        } catch {
            condition.lock()
            open -= 1
            condition.signal()
            condition.unlock()
            if let error = error as? PSQLError { throw PostgresValues.sqlError(error) }
            throw SQLError(.other, "could not connect to PostgreSQL: \(error)")
        }
    }

    private func giveBack(_ connection: PostgresConnection) {
        condition.lock()
        if connection.isClosed {
            open -= 1
        } else {
            idle.append(connection)
        }
        condition.signal()
        condition.unlock()
    }
}

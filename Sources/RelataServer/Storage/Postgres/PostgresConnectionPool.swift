import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO

/// How long a PostgreSQL database may keep Relata waiting.
public struct PostgresTimeLimits: Sendable {
    /// How long a unit of work waits for a connection when all are lent.
    public var acquire: Duration
    /// How long connecting (and logging in) may take.
    public var connect: Duration
    /// How long one statement may run: PostgreSQL stops it then (`statement_timeout`), and
    /// Relata stops waiting for its answer a little later, closing the connection, in case
    /// the answer never comes.
    public var statement: Duration
    /// How long closing every connection may take when the server stops.
    public var close: Duration

    public init(acquire: Duration = .seconds(30), connect: Duration = .seconds(10), statement: Duration = .seconds(300),
                close: Duration = .seconds(5)) {
        self.acquire = acquire
        self.connect = connect
        self.statement = statement
        self.close = close
    }

    /// How much longer than a statement's own limit Relata waits for PostgreSQL to report it stopped.
    static let answerGrace: Duration = .seconds(5)
}

/// The connections of one ``PostgresDatabase``: opened when needed, up to a maximum, and
/// kept for the next unit of work; a unit that finds them all lent waits for one, for at most
/// ``PostgresTimeLimits/acquire``. A connection that broke or stopped answering while lent is
/// closed and forgotten, never lent again. After ``closeAll()`` nothing more is lent, and
/// each lent connection is closed as it comes back.
final class PostgresConnectionPool: @unchecked Sendable {
    // @unchecked Sendable: `idle`, `open` and `closed` are read and written only while `condition`
    // is locked; the other properties are constants.
    let logger: Logger
    let limits: PostgresTimeLimits
    private let configuration: PostgresConnection.Configuration
    private let maxConnections: Int
    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    private var open = 0
    private var nextID = 0
    private var closed = false

    init(configuration: PostgresConnection.Configuration, maxConnections: Int, limits: PostgresTimeLimits, logger: Logger) {
        self.configuration = configuration
        self.maxConnections = maxConnections
        self.limits = limits
        self.logger = logger
    }

    /// A pool let go without ``closeAll()`` (a server whose start failed after connecting) closes
    /// its idle connections on its way out: postgres-nio stops a program whose connection goes
    /// unclosed. (Lent ones hold the pool until their work ends.)
    deinit {
        for connection in idle { connection.closeWithoutWaiting() }
    }

    /// Runs `work` with a connection of its own. Called on a thread that may wait (never an event loop).
    ///
    /// - Throws: ``SQLError/Kind/unavailable`` when no connection is free within the acquire
    ///   limit, PostgreSQL cannot be reached, or the pool is closed.
    ///
    /// A connection PostgreSQL closed while it waited here (an administrator ended its session,
    /// the server restarted) may still look open when lent — its close is on its way. Found
    /// closed before anything the work sent could change the database, it is dropped and the
    /// work starts again on another connection, up to ``startsOnClosedConnections`` times.
    func withConnection<Result>(_ work: (PostgresSQLConnection) throws -> Result) throws -> Result {
        var starts = 0
        while true {
            starts += 1
            let connection = PostgresSQLConnection(try lease(), limits: limits, logger: logger)
            defer { giveBack(connection) }
            do {
                return try work(connection)
            } catch where connection.closedBeforeAnyChange && starts < Self.startsOnClosedConnections {
                logger.info("a pooled connection to PostgreSQL had closed; the work starts again on another")
            }
        }
    }

    /// How many times one unit of work may start on connections found closed before it gives up.
    static let startsOnClosedConnections = 3

    /// How many connections are lent now.
    var lent: Int { condition.withLock { open - idle.count } }

    /// Closes every connection, waiting at most ``PostgresTimeLimits/close`` for them all; lent
    /// ones are closed when their work ends. Nothing is lent afterwards.
    func closeAll() {
        let closing: [PostgresConnection] = condition.withLock {
            closed = true
            defer { idle = [] }
            open -= idle.count
            condition.broadcast()
            return idle
        }
        let deadline = ContinuousClock.now + limits.close
        for connection in closing {
            _ = try? connection.closing().wait(atMost: max(deadline - ContinuousClock.now, .zero))
        }
    }

    private func lease() throws -> PostgresConnection {
        let deadline = Date(timeIntervalSinceNow: limits.acquire.seconds)
        condition.lock()
        while !closed, idle.isEmpty, open >= maxConnections {
            guard condition.wait(until: deadline) else {
                condition.unlock()
                throw SQLError(.unavailable, "all \(maxConnections) connections to PostgreSQL stayed busy for \(limits.acquire); try again shortly")
            }
        }
        guard !closed else {
            condition.unlock()
            throw SQLError(.unavailable, "the connections to PostgreSQL are closed: the server is stopping")
        }
        while let connection = idle.popLast() {
            // One the server closed while it was idle is forgotten, not lent.
            guard connection.isClosed else {
                condition.unlock()
                return connection
            }
            open -= 1
        }
        open += 1
        nextID += 1
        let id = nextID
        condition.unlock()
        do {
            return try connect(id: id)
        } catch {
            condition.withLock {
                open -= 1
                condition.signal()
            }
            throw error
        }
    }

    /// A new connection whose statements PostgreSQL stops after ``PostgresTimeLimits/statement``.
    private func connect(id: Int) throws -> PostgresConnection {
        let connecting = PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration,
                                                    id: id, logger: logger)
        let connection: PostgresConnection
        do {
            guard let made = try connecting.wait(atMost: limits.connect) else {
                connecting.whenSuccess { $0.closeWithoutWaiting() }
                throw SQLError(.unavailable, "PostgreSQL did not accept a connection within \(limits.connect)")
            }
            connection = made
        } catch let error as PSQLError where error.serverInfo == nil {
            // No answer from PostgreSQL itself: it could not be reached (refused, unresolvable, TLS).
            throw SQLError(.unavailable, "could not connect to PostgreSQL: \(error.underlying.map { "\($0)" } ?? "\(error.code)")")
        } catch let error as PSQLError {
            throw PostgresValues.sqlError(error)
        } catch let error as SQLError {
            throw error
        } catch {
            throw SQLError(.unavailable, "could not connect to PostgreSQL: \(error)")
        }
        do {
            let session = PostgresSQLConnection(connection, limits: limits, logger: logger)
            try session.execute("SET statement_timeout = \(PostgresSQLConnection.milliseconds(limits.statement))", [])
            return connection
        } catch {
            connection.closeWithoutWaiting()
            throw error
        }
    }

    private func giveBack(_ session: PostgresSQLConnection) {
        let connection = session.connection
        let keep = !session.isBroken && !connection.isClosed
        let closeIt = condition.withLock {
            defer { condition.signal() }
            guard keep, !closed else {
                open -= 1
                return keep
            }
            idle.append(connection)
            return false
        }
        if closeIt { _ = try? connection.closing().wait(atMost: limits.close) }
    }
}

extension PostgresConnection {
    /// Closing, as a future to wait on (the async `close()` is for tasks).
    func closing() -> EventLoopFuture<Void> {
        let future: EventLoopFuture<Void> = close()
        return future
    }

    /// Starts closing, without waiting for it to finish; the connection stays alive until it is
    /// closed (postgres-nio requires a connection to be closed before it goes).
    func closeWithoutWaiting() {
        closing().whenComplete { _ in withExtendedLifetime(self) {} }
    }
}

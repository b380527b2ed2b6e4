import Foundation
import Relata
import Testing
@testable import RelataScript

/// Runtimes behind actors: serialized access from any thread, a pool for concurrent units of work.
@Suite struct RuntimeConcurrencyTests {
    /// Counts units of work running at once.
    final class InFlight: @unchecked Sendable {
        // @unchecked Sendable: `now` and `most` are read and written only while `lock` is held.
        private let lock = NSLock()
        private var now = 0
        private(set) var most = 0
        func enter() { lock.withLock { now += 1; most = max(most, now) } }
        func leave() { lock.withLock { now -= 1 } }
        var highest: Int { lock.withLock { most } }
        var current: Int { lock.withLock { now } }

        /// Blocks (up to `timeout`) until two units have been in flight at once. A pool that
        /// serves units one at a time never gets there, and `highest` stays 1; a busy machine
        /// that merely starts the second unit late still does.
        func waitForCompany(timeout: Duration = .seconds(30)) {
            let deadline = ContinuousClock.now + timeout
            while highest < 2 && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.001) }
        }
    }

    static let ordersRules = """
        var served = 0;
        function beforeProcessDeltaChange(delta, change) {
            const until = Date.now() + 40;
            while (Date.now() < until) {}
            served++;
            if (!session.hasRole('Sales')) fail(session.User + ' may not change orders');
        }
        function servedSoFar() { return served; }
        """

    static func makeRuntime() throws -> RuleRuntime {
        let runtime = try RuleRuntime(engine: ScriptEngine(timeLimit: .seconds(2)))
        try runtime.load(RuleScript(ordersRules, fileName: "Orders.js"), forTable: "Orders")
        return runtime
    }

    /// One unit of work: a fresh Orders table with one change, processed for a user.
    static func unit(_ runtime: RuleRuntime, user: String, roles: [String]) throws -> [DeltaChange] {
        let orders = try DataTable(name: "Orders", fields: orderFields, csv: "OrderId,ClientId,Status\n10,1,open\n")
        try orders.rows[0].setValue(.string(String(user.prefix(10))), forKey: "Status")
        let data = TableDataAccess(tables: [orders])
        let environment = RuleEnvironment(session: Session(values: ["User": .string(user)], roles: roles), isServer: true, dataAccess: data)
        return try runtime.withEnvironment(environment) {
            try DeltaProcessor(runtime: runtime).process([orders.makeDelta()], store: TableStore(data: data))
        }.flatMap(\.changes)
    }

    /// Calls a function of the Orders script.
    static func call(_ function: String, in runtime: RuleRuntime) throws -> Value {
        let context = try #require(runtime.script(forTable: "Orders")).context
        return try context.value(from: context.call(context.globalFunction(named: function), []))
    }

    @Test func javaScriptCoreOptionsAreSetBeforeAnyThreadExists() {
        #expect(ProcessInfo.processInfo.environment["JSC_usePollingTraps"] == "true")
    }

    @Test func aRuntimeMadeHereServesWorkOnItsOwnersThread() async throws {
        let owner = RuleRuntimeOwner(try Self.makeRuntime())
        let first = try await owner.perform { try Self.unit($0, user: "ann", roles: ["Sales"]) }
        let second = try await owner.perform { try Self.unit($0, user: "bob", roles: []) }
        #expect(first.map(\.status) == [.resolved])
        #expect(second.map(\.message) == ["bob may not change orders"])
        let served = try await owner.perform { try Self.call("servedSoFar", in: $0) }
        #expect(served == 2, "the same compiled rules served both units")
    }

    @Test func twoRuntimesInAPoolServeConcurrentUnitsWithTheirOwnSessions() async throws {
        let pool = try RuleRuntimePool(size: 2) { try Self.makeRuntime() }
        let inFlight = InFlight()
        let users = (0..<8).map { ("user\($0)", $0.isMultiple(of: 2) ? ["Sales"] : ["Clerk"]) }
        let outcomes = try await withThrowingTaskGroup(of: (String, [DeltaChange]).self) { group in
            for (user, roles) in users {
                group.addTask {
                    try await pool.perform { runtime in
                        inFlight.enter()
                        defer { inFlight.leave() }
                        inFlight.waitForCompany()
                        return (user, try Self.unit(runtime, user: user, roles: roles))
                    }
                }
            }
            return try await group.reduce(into: [String: [DeltaChange]]()) { $0[$1.0] = $1.1 }
        }
        for (user, roles) in users {
            let changes = try #require(outcomes[user])
            if roles == ["Sales"] {
                #expect(changes.map(\.status) == [.resolved], "\(user)")
            } else {
                #expect(changes.map(\.message) == ["\(user) may not change orders"], "\(user) sees its own session")
            }
        }
        #expect(inFlight.highest == 2, "both runtimes worked at once, and never more than two units")
    }

    @Test func aRunawayScriptHoldsOnlyItsOwnRuntime() async throws {
        let pool = try RuleRuntimePool(size: 2) {
            // Twenty seconds of CPU: long enough that a loaded machine (or a collector run every
            // few allocations) still runs the quick unit first.
            let runtime = try RuleRuntime(engine: ScriptEngine(timeLimit: .seconds(20)))
            try runtime.load(RuleScript("function spin() { for (;;) {} }\nfunction quick() { return 1 }", fileName: "Orders.js"),
                             forTable: "Orders")
            return runtime
        }
        // Order, not wall-clock time (the machine may be busy): the quick unit must finish while the runaway one still spins.
        // Both units are handed to the pool at once, and the quick one waits for the spin on its runtime's own
        // thread: once handed over, nothing depends on the cooperative pool, which other suites may keep busy.
        let spinning = InFlight()
        async let runaway = pool.perform { runtime in
            spinning.enter()
            defer { spinning.leave() }
            do {
                _ = try Self.call("spin", in: runtime)
                return ScriptError.Kind?.none
            } catch let error as ScriptError {
                return error.kind
            }
        }
        async let quickUnit = pool.perform { runtime in
            let deadline = ContinuousClock.now + .seconds(60)
            while spinning.highest == 0 && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.001) }
            return (try Self.call("quick", in: runtime), spinning.current == 1)
        }
        let (quick, runawayStillSpinning) = try await quickUnit
        #expect(quick == 1)
        #expect(runawayStillSpinning, "the other runtime answered while the first one spun")
        #expect(try await runaway == .timeLimitExceeded)
    }

    @Test func aPoolOfNoRuntimesIsRefused() {
        #expect(throws: RelataError.self) { try RuleRuntimePool(size: 0) { try Self.makeRuntime() } }
        do {
            _ = try RuleRuntimePool(size: -3) { try Self.makeRuntime() }
        } catch let error as RelataError {
            #expect(error.code == .invalidArgument)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}

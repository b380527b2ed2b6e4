internal import CJavaScriptCore
internal import CRelataProcess
import Foundation

/// One JavaScriptCore virtual machine — a context group — and its CPU time limit.
/// Owns the group: every ``ScriptContext`` made in it holds the machine strongly,
/// so the group outlives each of its contexts.
package final class VirtualMachine {
    let group: JSContextGroupRef
    /// Set by the time-limit callback, so the exception the limit leaves is reported as such.
    package let watchdog = Watchdog()
    /// The time-limit error of a script that ran inside a call from JavaScript into Swift
    /// (a rule run by `lda` or a test's `insert`): JavaScriptCore terminates the outer script
    /// too, and this says why and where, instead of a bare "execution terminated".
    package var termination: ScriptError?
    /// The longest a single call into JavaScript may run, in CPU time.
    var timeLimit: Duration {
        didSet { armTimeLimit() }
    }
    #if DEBUG
    /// The thread inside a call into JavaScript, while one runs (debug builds check that no other enters).
    private var occupant: pthread_t?
    private let occupancy = NSLock()
    #endif

    init(timeLimit: Duration) {
        Self.configureJavaScriptCore
        self.timeLimit = timeLimit
        group = JSContextGroupCreate()
        armTimeLimit()
    }

    deinit {
        PrivateJavaScriptCore.clearExecutionTimeLimit?(group)
        JSContextGroupRelease(group)
    }

    /// JavaScriptCore reads its options once, when the first VM is made; `CRelataProcess`
    /// sets them when the program loads (see `RelataProcess.c`), never on a running process.
    private static let configureJavaScriptCore: Void = {
        precondition(relata_javascriptcore_configured(), "JavaScriptCore's options were not set when the program loaded")
    }()

    /// JavaScriptCore lets any thread use a virtual machine, one at a time. Debug builds
    /// stop a second thread that calls in while another thread's call is running.
    private func claim() {
        #if DEBUG
        occupancy.lock()
        defer { occupancy.unlock() }
        if let occupant, pthread_equal(occupant, pthread_self()) == 0 {
            preconditionFailure("a ScriptEngine was used by two threads at once; serialize access (RuleRuntimeOwner does)")
        }
        occupant = pthread_self()
        #endif
    }

    private func release() {
        #if DEBUG
        occupancy.lock()
        occupant = nil
        occupancy.unlock()
        #endif
    }

    /// Calls into JavaScript now running (nested when JavaScript calls Swift that calls JavaScript).
    private var depth = 0
    /// The depth at which a call starts that the time limit counts on its own: 0, or 1 inside
    /// ``enteredOnce(in:steps:_:)``, whose calls are nested in one entry.
    private var ownCallDepth = 0

    /// Runs one call into JavaScript. When the time limit struck during it, the outermost
    /// call clears what JavaScriptCore keeps of the termination — otherwise a termination
    /// that ended in a nested call (a rule run by a test's `insert`) would stop the next,
    /// unrelated script before its first statement.
    func enter<T>(in context: JSGlobalContextRef, _ body: () -> T) -> T {
        if depth == 0 { claim() }
        if depth == ownCallDepth { watchdog.callStarted() }
        depth += 1
        defer {
            depth -= 1
            // A call stopped inside a batch's entry (``entered(in:_:)``): JavaScriptCore arms its
            // limit only on an outermost entry, so it is armed again for the batch's next calls.
            if depth > 0 && depth == ownCallDepth && watchdog.disarmed { watchdog.arm() }
            if depth == 0 { watchdog.disarmed = false }   // the next outermost entry arms it
            if depth == 0 && watchdog.struck {
                watchdog.struck = false
                JSString.with("0") { _ = JSEvaluateScript(context, $0, nil, nil, 1, nil) }
            }
            if depth == 0 { release() }
        }
        return body()
    }

    /// Runs `count` steps with the calls into JavaScript they make nested in one entry into
    /// the machine, each call still with a time limit of its own (``Watchdog``).
    ///
    /// JavaScriptCore arms its time limit on every outermost entry, reading the thread's CPU
    /// clock (a system call on Linux): a server replaying 100,000 edits pays it once instead
    /// of once per edit. Microtasks a call queues run when the entry ends, as in the blocks of
    /// change events. A call the time limit stops ends the entry, so that nothing JavaScriptCore
    /// keeps of the termination reaches the next call; the steps after it run in a new one.
    /// Already inside JavaScript, the steps just run.
    ///
    /// - Parameter step: runs step `index`; its errors are its own to handle.
    func enteredOnce(in context: ScriptContext, steps count: Int, _ step: (Int) -> Void) {
        var next = 0
        func runTheRestAlone() {
            while next < count { step(next); next += 1 }
        }
        guard depth == 0 else { return runTheRestAlone() }
        while next < count {
            let first = next
            insideOneEntry(in: context) {
                while next < count {
                    step(next)
                    next += 1
                    if watchdog.struck { break }
                }
            }
            // An entry that ran no step (JavaScriptCore refused the call): the rest run one entry each.
            if next == first { runTheRestAlone() }
        }
    }

    /// Runs `body` — a batch of edits whose rules fire one call each — with those calls nested
    /// in one entry into the machine, each with a time limit of its own (``Watchdog``), as
    /// ``enteredOnce(in:steps:_:)`` does for a server's replay. Microtasks a call queues run when
    /// `body` ends. Unlike the replay's steps, `body` cannot be cut in two where a call was
    /// stopped, so the batch's later calls stay in the same entry: JavaScriptCore lets functions
    /// be called there, but a script evaluated before `body` ends is stopped at once.
    /// Already inside JavaScript, `body` just runs.
    func entered<T, E: Error>(in context: ScriptContext, _ body: () throws(E) -> T) throws(E) -> T {
        guard depth == 0 else { return try body() }
        var outcome: Result<T, E>?
        insideOneEntry(in: context) { outcome = Result { () throws(E) -> T in try body() } }
        // JavaScriptCore refused the call (its stack was exhausted): `body` runs outside it.
        guard let outcome else { return try body() }
        return try outcome.get()
    }

    /// Runs `body` inside one call from Swift into the machine — the outermost, whose calls into
    /// JavaScript are then nested and each counted as a call of its own by the time limit — or
    /// not at all when JavaScriptCore refuses the call.
    private func insideOneEntry(in context: ScriptContext, _ body: () -> Void) {
        // The driver holds `body` through a box emptied before this returns: JavaScriptCore
        // frees the function object whenever it collects it.
        let box = DriverBody()
        let driver = NativeFunction.make(in: context) { context, _, _ in
            box.run?()
            return JSValueMakeUndefined(context.ref)
        }
        JSValueProtect(context.ref, driver)
        defer { JSValueUnprotect(context.ref, driver) }
        withoutActuallyEscaping(body) { body in
            box.run = body
            defer { box.run = nil }
            ownCallDepth = 1
            defer { ownCallDepth = 0 }
            _ = enter(in: context.ref) { JSObjectCallAsFunction(context.ref, driver, nil, 0, nil, nil) }
        }
    }

    /// Arms JavaScriptCore's limit at a tick of the time limit (``Watchdog``).
    private func armTimeLimit() {
        watchdog.group = group
        watchdog.tick = Watchdog.tick(of: timeLimit)
        watchdog.arm()
    }
}

/// What the driver of ``VirtualMachine/insideOneEntry(in:_:)`` runs, while it runs.
private final class DriverBody {
    var run: (() -> Void)?
}

/// The time limit, counted per call. JavaScriptCore's watchdog fires every ``tick`` of CPU
/// time while JavaScript runs; the script is stopped only when one call was running at
/// ``ticksPerLimit`` + 1 ticks in a row. So a call is stopped after between the limit and an
/// eighth more, whether it entered the machine alone or nested in a block
/// (``VirtualMachine/enteredOnce(in:steps:_:)``), whose entry outlives each call.
package final class Watchdog {
    /// The limit stopped a script and the error it left has not been reported yet.
    package var fired = false
    /// The limit stopped a script during the outermost call that is running.
    var struck = false
    /// The limit stopped a script and has not been armed since: the next outermost entry arms it.
    fileprivate(set) var disarmed = false
    /// Ticks in one time limit.
    static let ticksPerLimit = 8
    fileprivate var group: JSContextGroupRef?
    fileprivate var tick = 1.0
    /// Counts the calls that started, so that a tick tells one call from the next.
    private var calls: UInt64 = 0
    private var callAtLastTick: UInt64 = .max
    private var ticksInOneCall = 0

    static func tick(of limit: Duration) -> Double {
        (Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18) / Double(ticksPerLimit)
    }

    func callStarted() { calls &+= 1 }

    /// Arms JavaScriptCore's limit for one tick. The watchdog is passed unretained: its
    /// machine owns it and clears the limit before it goes.
    fileprivate func arm() {
        disarmed = false
        PrivateJavaScriptCore.setExecutionTimeLimit?(group, tick, Self.ticked, Unmanaged.passUnretained(self).toOpaque())
    }

    /// A tick: true stops the script. Returning false leaves JavaScriptCore's limit disarmed,
    /// so a tick that lets the script go on arms it again first.
    private static let ticked: JSShouldTerminateCallback = { _, box in
        guard let box else { return true }
        let watchdog = Unmanaged<Watchdog>.fromOpaque(box).takeUnretainedValue()
        if watchdog.calls == watchdog.callAtLastTick {
            watchdog.ticksInOneCall += 1
        } else {
            watchdog.callAtLastTick = watchdog.calls
            watchdog.ticksInOneCall = 1
        }
        guard watchdog.ticksInOneCall > ticksPerLimit else {
            watchdog.arm()
            return false
        }
        watchdog.callAtLastTick = .max
        watchdog.fired = true
        watchdog.struck = true
        watchdog.disarmed = true
        return true
    }
}

@available(*, unavailable, message: "A VirtualMachine is used by one thread at a time; a RuleRuntimeOwner serializes access.")
extension VirtualMachine: Sendable {}

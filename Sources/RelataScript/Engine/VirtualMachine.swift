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

    /// Runs one call into JavaScript. When the time limit struck during it, the outermost
    /// call clears what JavaScriptCore keeps of the termination — otherwise a termination
    /// that ended in a nested call (a rule run by a test's `insert`) would stop the next,
    /// unrelated script before its first statement.
    func enter<T>(in context: JSGlobalContextRef, _ body: () -> T) -> T {
        if depth == 0 { claim() }
        depth += 1
        defer {
            depth -= 1
            if depth == 0 && watchdog.struck {
                watchdog.struck = false
                JSString.with("0") { _ = JSEvaluateScript(context, $0, nil, nil, 1, nil) }
            }
            if depth == 0 { release() }
        }
        return body()
    }

    private func armTimeLimit() {
        let seconds = Double(timeLimit.components.seconds) + Double(timeLimit.components.attoseconds) / 1e18
        // The callback must return true (terminate) every time: returning false would disarm the limit.
        // The watchdog is passed unretained: this machine owns it and clears the limit before it goes.
        PrivateJavaScriptCore.setExecutionTimeLimit?(group, seconds, { _, box in
            guard let box else { return true }
            let watchdog = Unmanaged<Watchdog>.fromOpaque(box).takeUnretainedValue()
            watchdog.fired = true
            watchdog.struck = true
            return true
        }, Unmanaged.passUnretained(watchdog).toOpaque())
    }
}

/// Remembers that the time limit stopped a script, so the exception it leaves can be reported as such.
package final class Watchdog {
    /// The limit stopped a script and the error it left has not been reported yet.
    package var fired = false
    /// The limit stopped a script during the outermost call that is running.
    var struck = false
}

@available(*, unavailable, message: "A VirtualMachine is used by one thread at a time; a RuleRuntimeOwner serializes access.")
extension VirtualMachine: Sendable {}

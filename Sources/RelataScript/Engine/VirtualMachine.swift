internal import CJavaScriptCore
import Foundation

/// One JavaScriptCore virtual machine — a context group — and its CPU time limit.
/// Owns the group: every ``ScriptContext`` made in it holds the machine strongly,
/// so the group outlives each of its contexts.
final class VirtualMachine {
    let group: JSContextGroupRef
    /// Set by the time-limit callback, so the exception the limit leaves is reported as such.
    let watchdog = Watchdog()
    /// The longest a single call into JavaScript may run, in CPU time.
    var timeLimit: Duration {
        didSet { armTimeLimit() }
    }
    #if DEBUG
    private let owner = pthread_self()
    #endif

    init(timeLimit: Duration) {
        Self.configureJavaScriptCore
        self.timeLimit = timeLimit
        group = JSContextGroupCreate()
        armTimeLimit()
    }

    deinit {
        JSContextGroupClearExecutionTimeLimit(group)
        JSContextGroupRelease(group)
    }

    /// JavaScriptCore reads its options once, when the first VM is made. Polling
    /// traps make compiled loops check for termination themselves instead of
    /// waiting for a signal, so the time limit stops a runaway loop reliably
    /// even while other threads run their own engines.
    private static let configureJavaScriptCore: Void = {
        setenv("JSC_usePollingTraps", "true", 0)
    }()

    func checkThread() {
        #if DEBUG
        precondition(pthread_equal(owner, pthread_self()) != 0,
                     "a ScriptEngine was used on a thread other than the one that created it; use one engine per thread")
        #endif
    }

    private func armTimeLimit() {
        let seconds = Double(timeLimit.components.seconds) + Double(timeLimit.components.attoseconds) / 1e18
        // The callback must return true (terminate) every time: returning false would disarm the limit.
        // The watchdog is passed unretained: this machine owns it and clears the limit before it goes.
        JSContextGroupSetExecutionTimeLimit(group, seconds, { _, box in
            guard let box else { return true }
            Unmanaged<Watchdog>.fromOpaque(box).takeUnretainedValue().fired = true
            return true
        }, Unmanaged.passUnretained(watchdog).toOpaque())
    }
}

/// Remembers that the time limit stopped a script, so the exception it leaves can be reported as such.
final class Watchdog {
    var fired = false
}

@available(*, unavailable, message: "A VirtualMachine belongs to the thread that created it.")
extension VirtualMachine: Sendable {}

internal import CJavaScriptCore
import Foundation

/// The JavaScriptCore functions Relata uses that are not public API — the CPU time limit
/// and turning `eval` off — looked up at run time rather than linked, so an app links
/// cleanly against Apple's JavaScriptCore framework, where they are private.
///
/// WebKitGTK's library (Linux) exports them, so there both are always available. Where
/// one is missing, scripts run without it: no CPU limit (a runaway loop is not stopped),
/// or `eval` and `new Function` left on. ``ScriptEngine/sandboxLimits`` tells which.
enum PrivateJavaScriptCore {
    typealias SetExecutionTimeLimit = @convention(c) (JSContextGroupRef?, Double, JSShouldTerminateCallback?, UnsafeMutableRawPointer?) -> Void
    typealias ClearExecutionTimeLimit = @convention(c) (JSContextGroupRef?) -> Void
    typealias SetEvalEnabled = @convention(c) (JSGlobalContextRef?, Bool, JSStringRef?) -> Void

    // Looked up once.
    static let setExecutionTimeLimit: SetExecutionTimeLimit? = symbol("JSContextGroupSetExecutionTimeLimit")
    static let clearExecutionTimeLimit: ClearExecutionTimeLimit? = symbol("JSContextGroupClearExecutionTimeLimit")
    static let setEvalEnabled: SetEvalEnabled? = symbol("JSGlobalContextSetEvalEnabled")

    /// A function of the process's loaded libraries (JavaScriptCore among them), or nil.
    private static func symbol<Function>(_ name: String) -> Function? {
        address(of: name).map { unsafeBitCast($0, to: Function.self) }
    }

    /// Where a symbol of the process's loaded libraries is, or nil when none defines it.
    static func address(of name: String) -> UnsafeMutableRawPointer? {
        dlopen(nil, RTLD_NOW).flatMap { dlsym($0, name) }
    }
}

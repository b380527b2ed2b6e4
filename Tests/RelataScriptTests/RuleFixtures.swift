import Relata
import Testing
@testable import RelataScript
@_exported import RelataTestSupport

func scriptError(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> ScriptError? {
    do {
        try body()
        Issue.record("expected a ScriptError, nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as ScriptError {
        return error
    } catch {
        Issue.record("expected a ScriptError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}


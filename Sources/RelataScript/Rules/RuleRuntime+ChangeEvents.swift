internal import CJavaScriptCore
import Relata

/// A delta's change events run for many changes per call into JavaScript.
extension RuleRuntime {
    /// Where a run of change events ended (``runChangeEvents(in:table:view:from:to:)``).
    struct ChangeEventRun {
        /// Every change from the run's start up to here passed both events, and was shown resolved.
        var reached: Int
        /// Why the change at ``reached`` failed, and whether `beforeProcessDeltaChange` had
        /// passed first (the change was then shown resolved before `afterProcessDeltaChange` ran).
        var failure: (error: any Error, afterResolving: Bool)?
    }

    /// How long one call into JavaScript runs changes before it returns: the time limit bounds a
    /// call, so a call must not run many slow changes; a call costs far less than this.
    static let changeEventSlice = 2.0   // milliseconds

    /// Runs `beforeProcessDeltaChange(delta, change)`, shows the change resolved, then runs
    /// `afterProcessDeltaChange(delta, change)`, for the changes `start..<end` of a delta one
    /// script sees — exactly what one call per event and change does, in a call into JavaScript
    /// per ``changeEventSlice``. Stops at the first change that fails.
    func runChangeEvents(in script: CompiledScript, table: String, view: DeltaView, from start: Int, to end: Int) -> ChangeEventRun {
        let context = script.context
        let before = script.handler(RuleEvent.beforeProcessDeltaChange.handlerName)
        let after = script.handler(RuleEvent.afterProcessDeltaChange.handlerName)
        let at = context.makeArray()
        JSValueProtect(context.ref, at)
        defer { JSValueUnprotect(context.ref, at) }
        let outcome: (returned: JSValueRef?, thrown: JSValueRef?)
        do {
            outcome = try RuleScope.run {
                let runner = try context.helper("runChanges")
                var arguments = RootedValues(in: context)
                arguments.append(before ?? JSValueMakeNull(context.ref))
                arguments.append(after ?? JSValueMakeNull(context.ref))
                arguments.append(view.object)
                arguments.append(view.kept)
                arguments.append(JSValueMakeNumber(context.ref, Double(start)))
                arguments.append(JSValueMakeNumber(context.ref, Double(end)))
                arguments.append(JSValueMakeNumber(context.ref, Self.changeEventSlice))
                arguments.append(at)
                return context.outcome(calling: runner, arguments)
            }
        } catch {
            return ChangeEventRun(reached: start, failure: (error, false))
        }

        // A stop no script can catch (the time limit) ends the call: the change running fails.
        if let thrown = outcome.thrown {
            let index = context.integer(from: context.element(0, of: at)).flatMap { (start..<end).contains($0) ? $0 : nil } ?? start
            let phase = context.integer(from: context.element(1, of: at)) ?? 0
            return failed(index, phase: phase, context.error(from: thrown, file: nil), script: script, table: table)
        }
        let unanswered = ChangeEventRun(reached: start, failure: (ScriptError(.runtime, "the change events of \(table) did not say how far they ran"), false))
        guard let returned = outcome.returned, let answer = JSValueToObject(context.ref, returned, nil),
              let index = context.integer(from: context.element(0, of: answer)), (start...end).contains(index) else { return unanswered }
        guard context.length(of: answer) > 1, index < end else { return index > start ? ChangeEventRun(reached: index) : unanswered }
        let phase = context.integer(from: context.element(1, of: answer)) ?? 0
        let error = JSValueToBoolean(context.ref, context.element(3, of: answer))
            ? Self.asyncHandler(Self.changeEvent(phase: phase).handlerName)
            : context.error(from: context.element(2, of: answer), file: nil)
        return failed(index, phase: phase, error, script: script, table: table)
    }

    /// The event a run's phase stands for: 0 before the change is resolved, 1 after.
    private static func changeEvent(phase: Int) -> RuleEvent {
        phase == 0 ? .beforeProcessDeltaChange : .afterProcessDeltaChange
    }

    private func failed(_ index: Int, phase: Int, _ error: ScriptError, script: CompiledScript, table: String) -> ChangeEventRun {
        ChangeEventRun(reached: index, failure: (located(error, event: Self.changeEvent(phase: phase), in: script, table: table, row: nil), phase != 0))
    }
}

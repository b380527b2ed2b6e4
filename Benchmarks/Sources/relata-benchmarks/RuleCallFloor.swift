// The rules' floor of a replayed apply: what the server's row rule costs with nothing of Relata
// around it. The replay runs `beforeUpdate(row, old)` once per edit, in the order the edits were
// made — each call sees the rows as the edits before it left them, and its verdict decides
// whether the edit stands before the next one is made — so whatever an implementation does, it
// enters JavaScript once per edit with that edit's row and old values. The floor does only that,
// through JavaScriptCore's C API: two plain objects of four properties made from Swift values,
// one call of the same script's function, the time limit armed as the rule runtime arms it.
// Beside it, the same calls at their least (row objects made in bulk, one value set a call),
// in a JavaScript loop (a server replaying wholly inside JavaScript), and the delta rule's
// calls in a JavaScript loop.
#if canImport(CBenchmarkJavaScriptCore)
import CBenchmarkJavaScriptCore

/// One rule call per change through JavaScriptCore's C API, on the rows the apply benchmark edits.
final class RuleCallFloor {
    private let group: JSContextGroupRef
    let context: JSGlobalContextRef
    /// The rule, `beforeUpdate`.
    let function: JSObjectRef
    /// The fields' names, in the order the objects hold them: ItemId, Name, Quantity, UnitPrice.
    let names: [JSStringRef]

    /// - Parameter script: the table's rules; `beforeUpdate(row, old)` is the function called.
    init(script: String) {
        group = JSContextGroupCreate()
        context = JSGlobalContextCreateInGroup(group, nil)
        JSContextGroupSetExecutionTimeLimit(group, 60, nil, nil)
        let source = JSStringCreateWithUTF8CString("function fail(message) { throw new Error(message); }\n" + script)
        var exception: JSValueRef?
        JSEvaluateScript(context, source, nil, nil, 1, &exception)
        JSStringRelease(source)
        precondition(exception == nil, "the rules' script failed to load")
        let name = JSStringCreateWithUTF8CString("beforeUpdate")
        let value = JSObjectGetProperty(context, JSContextGetGlobalObject(context), name, nil)
        JSStringRelease(name)
        guard let value, let object = JSValueToObject(context, value, nil), JSObjectIsFunction(context, object) else {
            preconditionFailure("the rules' script has no beforeUpdate")
        }
        function = object
        JSValueProtect(context, function)
        names = ["ItemId", "Name", "Quantity", "UnitPrice"].map { (name: String) in JSStringCreateWithUTF8CString(name) }
    }

    deinit {
        names.forEach(JSStringRelease)
        JSValueUnprotect(context, function)
        JSGlobalContextRelease(context)
        JSContextGroupRelease(group)
    }

    /// Calls the rule once for each of the first `count` items, their quantity one more; the
    /// number of calls that threw (none, for the benchmark's data). With `inOneEntry`, the calls
    /// are nested in one call from Swift into JavaScript, as a batch's or a replay's are.
    func run(_ count: Int, inOneEntry: Bool = false) -> Int {
        var failures = 0
        let calls = {
            for index in 0..<count {
                let (id, name, quantity, price) = Self.item(index)
                if self.callRule(self.object(id: id, name: name, quantity: quantity + 1, price: price),
                                 self.object(id: id, name: name, quantity: quantity, price: price)) { failures += 1 }
            }
        }
        if inOneEntry { runInsideOneEntry(calls) } else { calls() }
        return failures
    }

    /// The benchmark's item at `index`, as its table holds it before the edit.
    static func item(_ index: Int) -> (id: Double, name: String, quantity: Double, price: Double) {
        (Double(index + 1), "Item \(index + 1)", Double(index % 50 + 1), Double(index % 1000) / 10 + 1)
    }

    /// The same calls made by a loop in JavaScript on rows made there — what a replay run
    /// wholly inside JavaScript would pay for its rule calls, before any value crossed from
    /// Swift: a floor below ``run(_:)``. The number of calls that threw.
    func runInJavaScript(_ count: Int) -> Int {
        loopFailures(running: """
            (function (count) {
                let failures = 0;
                for (let index = 0; index < count; index++) {
                    const quantity = index % 50 + 1, price = (index % 1000) / 10 + 1, name = 'Item ' + (index + 1);
                    try {
                        beforeUpdate({ ItemId: index + 1, Name: name, Quantity: quantity + 1, UnitPrice: price },
                                     { ItemId: index + 1, Name: name, Quantity: quantity, UnitPrice: price });
                    } catch (error) { failures++; }
                }
                return failures;
            })(\(count))
            """, failing: "the rules' loop failed")
    }

    /// The client's rule calls at their least: each edit's verdict is its own call, so each edit
    /// enters JavaScript once, but its objects need not be made for it — every row's object and
    /// original values made beforehand by one call, each edit then sets its one changed value on
    /// its row's object and calls the rule with both: one property set and one call per edit, the
    /// time limit armed. Below ``run(_:)``, which makes both objects from Swift values each time.
    /// With `inOneEntry`, the calls are nested in one call from Swift into JavaScript, as the
    /// edits of a `performBatchUpdates` are: JavaScriptCore arms the time limit once, not per call.
    /// The number of calls that threw.
    func runOnRowsMadeInBulk(_ count: Int, inOneEntry: Bool = false) -> Int {
        let made = evaluate("""
            (function (count) {
                const rows = [], originals = [];
                for (let index = 0; index < count; index++) {
                    const quantity = index % 50 + 1, price = (index % 1000) / 10 + 1, name = 'Item ' + (index + 1);
                    rows.push({ ItemId: index + 1, Name: name, Quantity: quantity, UnitPrice: price });
                    originals.push({ ItemId: index + 1, Name: name, Quantity: quantity, UnitPrice: price });
                }
                return [rows, originals];
            })(\(count))
            """, failing: "the rows could not be made")
        guard let made, let pair = JSValueToObject(context, made, nil),
              let rows = JSValueToObject(context, JSObjectGetPropertyAtIndex(context, pair, 0, nil), nil),
              let originals = JSValueToObject(context, JSObjectGetPropertyAtIndex(context, pair, 1, nil), nil) else {
            preconditionFailure("the rows were not made")
        }
        JSValueProtect(context, pair)
        defer { JSValueUnprotect(context, pair) }
        var failures = 0
        let edits = {
            for index in 0..<count {
                guard let row = JSValueToObject(self.context, JSObjectGetPropertyAtIndex(self.context, rows, UInt32(index), nil), nil),
                      let original = JSValueToObject(self.context, JSObjectGetPropertyAtIndex(self.context, originals, UInt32(index), nil), nil) else {
                    preconditionFailure("row \(index) was not made")
                }
                JSObjectSetProperty(self.context, row, self.names[2], JSValueMakeNumber(self.context, Double(index % 50 + 2)),
                                    JSPropertyAttributes(kJSPropertyAttributeNone), nil)
                if self.callRule(row, original) { failures += 1 }
            }
        }
        if inOneEntry { runInsideOneEntry(edits) } else { edits() }
        return failures
    }

    /// Runs `body` inside a function called from Swift into JavaScript, so the calls it makes are nested.
    func runInsideOneEntry(_ body: @escaping () -> Void) {
        RuleCallFloor.entryBody = body
        defer { RuleCallFloor.entryBody = nil }
        let driver = JSObjectMakeFunctionWithCallback(context, nil) { context, _, _, _, _, _ in
            RuleCallFloor.entryBody?()
            return JSValueMakeUndefined(context)
        }
        var exception: JSValueRef?
        _ = JSObjectCallAsFunction(context, driver, nil, 0, nil, &exception)
        precondition(exception == nil, "the entry's driver threw")
    }

    /// What the driver of ``runInsideOneEntry(_:)`` runs: a C callback captures nothing. One benchmark thread.
    nonisolated(unsafe) private static var entryBody: (() -> Void)?

    /// The delta rule's floor: `beforeProcessDeltaChange(delta, change)` called once per change
    /// by a loop in JavaScript, each change made there with what a script is shown of it
    /// (`type`, `changeId`, `oldValues`, `newValues` with every field, `status`, `message`) and
    /// kept in the delta's `changes` — what any implementation pays to run the rule on `count`
    /// updates, before any value crossed from Swift. The number of calls that threw.
    func runDeltaRuleInJavaScript(_ count: Int) -> Int {
        loopFailures(running: """
            (function (count) {
                const changes = [], delta = { name: 'Lines', count, changes };
                let failures = 0;
                for (let index = 0; index < count; index++) {
                    const quantity = index % 50 + 1, price = (index % 1000) / 10 + 1, name = 'Item ' + (index + 1);
                    const change = { type: 'update', changeId: index + 1, changeID: index + 1,
                                     oldValues: { ItemId: index + 1, Name: name, Quantity: quantity, UnitPrice: price },
                                     newValues: { ItemId: index + 1, Name: name, Quantity: quantity + 1, UnitPrice: price },
                                     status: 'pending', message: null };
                    changes.push(change);
                    try { beforeProcessDeltaChange(delta, change); } catch (error) { failures++; }
                }
                return failures;
            })(\(count))
            """, failing: "the delta rule's loop failed")
    }

    /// Calls `beforeUpdate` with a row and its original values; whether it threw.
    func callRule(_ row: JSObjectRef, _ original: JSObjectRef) -> Bool {
        let arguments: [JSValueRef?] = [row, original]
        var exception: JSValueRef?
        _ = JSObjectCallAsFunction(context, function, nil, 2, arguments, &exception)
        return exception != nil
    }

    /// Runs a script in the rules' context; a script that throws stops the benchmark with `message`.
    func evaluate(_ script: String, failing message: String) -> JSValueRef? {
        let source = JSStringCreateWithUTF8CString(script)
        defer { JSStringRelease(source) }
        var exception: JSValueRef?
        let result = JSEvaluateScript(context, source, nil, nil, 1, &exception)
        precondition(exception == nil, message)
        return result
    }

    /// The number a script's loop returns: how many of its calls threw.
    private func loopFailures(running script: String, failing message: String) -> Int {
        Int(JSValueToNumber(context, evaluate(script, failing: message), nil))
    }

    private func object(id: Double, name: String, quantity: Double, price: Double) -> JSObjectRef {
        let object = JSObjectMake(context, nil, nil)!
        let text = JSStringCreateWithUTF8CString(name)
        let values: [JSValueRef?] = [
            JSValueMakeNumber(context, id), JSValueMakeString(context, text),
            JSValueMakeNumber(context, quantity), JSValueMakeNumber(context, price),
        ]
        JSStringRelease(text)
        for (key, value) in zip(names, values) {
            JSObjectSetProperty(context, object, key, value, JSPropertyAttributes(kJSPropertyAttributeNone), nil)
        }
        return object
    }
}
#endif

// Where a rule call's cost lies: the same `beforeUpdate(row, old)` calls, nested in one entry
// into JavaScript as a batch's or a replay's are, with the row and its original values made
// three ways — plain objects set property by property from Swift, objects of a class whose
// reads call back into Swift (how Relata's row objects are made), and plain objects made by a
// JavaScript function the values are passed to. Nothing of Relata runs: this weighs designs.
#if canImport(CBenchmarkJavaScriptCore)
import CBenchmarkJavaScriptCore
import Foundation

extension RuleCallFloor {
    /// The calls with two objects of a class whose reads call back into Swift, as Relata's row
    /// objects are made: a box of values per object, owned by it and freed by its finalizer, each
    /// property read a callback that finds the field by name and makes its value. The number of
    /// calls that threw.
    func runOnCallbackObjects(_ count: Int) -> Int {
        var failures = 0
        runInsideOneEntry {
            for index in 0..<count {
                let (id, name, quantity, price) = Self.item(index)
                let row = JSObjectMake(self.context, Self.callbackClass,
                                       Unmanaged.passRetained(ItemBox(id: id, name: name, quantity: quantity + 1, price: price)).toOpaque())
                let original = JSObjectMake(self.context, Self.callbackClass,
                                            Unmanaged.passRetained(ItemBox(id: id, name: name, quantity: quantity, price: price)).toOpaque())
                guard let row, let original else { preconditionFailure("an object was not made") }
                if self.callRule(row, original) { failures += 1 }
            }
        }
        return failures
    }

    /// The calls through a JavaScript function the row's values are passed to, which makes the
    /// row and its original values as plain objects and calls the rule: five numbers and a string
    /// made in Swift per call, no object. The objects' prototype is a proxy that throws on any
    /// name no field has, so reading a misspelt field is an error, as on Relata's row objects,
    /// while reading a field is a plain property read. The number of calls that threw.
    func runThroughObjectsMadeInJavaScript(_ count: Int) -> Int {
        let made = evaluate("""
            (function (rule) {
                const unknown = new Proxy(Object.prototype, {
                    get(target, name, receiver) {
                        if (typeof name === 'symbol' || name in target || name === 'toJSON' || name === 'then') return Reflect.get(target, name, receiver);
                        throw new Error('the table has no field ' + name);
                    },
                });
                return function (id, name, quantity, price, originalQuantity) {
                    return rule({ __proto__: unknown, ItemId: id, Name: name, Quantity: quantity, UnitPrice: price },
                                { __proto__: unknown, ItemId: id, Name: name, Quantity: originalQuantity, UnitPrice: price });
                };
            })(beforeUpdate)
            """, failing: "the calling function could not be made")
        guard let made, let caller = JSValueToObject(context, made, nil) else { preconditionFailure("no calling function") }
        JSValueProtect(context, caller)
        defer { JSValueUnprotect(context, caller) }
        return callWithValues(count, caller)
    }

    /// The calls through a JavaScript function the row's values are passed to, which wraps them
    /// in two proxies and calls the rule: what row objects that keep every property of today's
    /// cost — a read through the handler's trap (a field found by name, a misspelt name refused),
    /// a write through one native function that validates it (the rule makes none here), the
    /// fields listed by `Object.keys`. One handler per table, shared by every row. The number of
    /// calls that threw.
    func runThroughProxies(_ count: Int) -> Int {
        let validate = JSObjectMakeFunctionWithCallback(context, nil) { context, _, _, count, arguments, _ in
            count == 2 ? arguments?[1] : JSValueMakeUndefined(context)   // the value as given: what a write would store
        }
        let made = evaluate("""
            (function (rule, validate) {
                const fields = ['ItemId', 'Name', 'Quantity', 'UnitPrice'];
                const index = new Map(fields.map((name, position) => [name, position]));
                function refuse(name) { throw new Error('the table has no field ' + String(name)); }
                function handler(writable) {
                    return {
                        get(target, name) {
                            const position = index.get(name);
                            if (position !== undefined) return target.values[position];
                            if (typeof name === 'symbol' || name === 'toJSON' || name === 'then') return undefined;
                            return refuse(name);
                        },
                        set(target, name, value) {
                            const position = index.get(name);
                            if (position === undefined) return refuse(name);
                            if (!writable) throw new Error('old values are read-only');
                            target.values[position] = validate(position, value);
                            return true;
                        },
                        has(target, name) { return index.has(name) || refuse(name); },
                        ownKeys() { return fields; },
                        getOwnPropertyDescriptor(target, name) {
                            const position = index.get(name);
                            return position === undefined ? undefined : { value: target.values[position], writable, enumerable: true, configurable: true };
                        },
                    };
                }
                const row = handler(true), old = handler(false);
                return function (id, name, quantity, price, originalQuantity) {
                    return rule(new Proxy({ values: [id, name, quantity, price] }, row),
                                new Proxy({ values: [id, name, originalQuantity, price] }, old));
                };
            })
            """, failing: "the proxies' maker could not be made")
        guard let made, let maker = JSValueToObject(context, made, nil) else { preconditionFailure("no proxies' maker") }
        var exception: JSValueRef?
        let arguments: [JSValueRef?] = [function, validate]
        guard let returned = JSObjectCallAsFunction(context, maker, nil, 2, arguments, &exception), exception == nil,
              let caller = JSValueToObject(context, returned, nil) else { preconditionFailure("no calling function") }
        JSValueProtect(context, caller)
        defer { JSValueUnprotect(context, caller) }
        return callWithValues(count, caller)
    }

    /// ``runThroughProxies(_:)`` with what live row objects need besides: the row proxy's target
    /// also holds a handle to the native row (an object of a class with a finalizer and a box, for
    /// `lda` to find the row) and the generation its values were read in, which every read of a
    /// field compares with a counter in memory Swift shares (a changed row is read again; here the
    /// counter never moves). The number of calls that threw.
    func runThroughLiveProxies(_ count: Int) -> Int {
        let validate = JSObjectMakeFunctionWithCallback(context, nil) { context, _, _, count, arguments, _ in
            count == 2 ? arguments?[1] : JSValueMakeUndefined(context)
        }
        let made = evaluate("""
            (function (rule, validate, refresh) {
                const fields = ['ItemId', 'Name', 'Quantity', 'UnitPrice'];
                const index = new Map(fields.map((name, position) => [name, position]));
                const generation = new Float64Array(1);
                function refuse(name) { throw new Error('the table has no field ' + String(name)); }
                const row = {
                    get(target, name) {
                        const position = index.get(name);
                        if (position !== undefined) {
                            if (target.g !== generation[0]) refresh(target);
                            return target.v[position];
                        }
                        if (typeof name === 'symbol' || name === 'toJSON' || name === 'then') return undefined;
                        return refuse(name);
                    },
                    set(target, name, value) {
                        const position = index.get(name);
                        if (position === undefined) return refuse(name);
                        target.v[position] = validate(position, value);
                        return true;
                    },
                    has(target, name) { return index.has(name) || refuse(name); },
                    ownKeys() { return fields; },
                };
                const old = {
                    get(target, name) {
                        const position = index.get(name);
                        return position === undefined ? Reflect.get(target, name) : target.v[position];
                    },
                    set(target, name) {
                        if (index.has(name)) throw new Error('old values are read-only');
                        return false;
                    },
                    ownKeys() { return fields; },
                };
                return function (handle, id, name, quantity, price, originalQuantity) {
                    return rule(new Proxy({ h: handle, g: generation[0], v: [id, name, quantity, price] }, row),
                                new Proxy({ v: [id, name, originalQuantity, price] }, old));
                };
            })
            """, failing: "the live proxies' maker could not be made")
        guard let made, let maker = JSValueToObject(context, made, nil) else { preconditionFailure("no live proxies' maker") }
        var exception: JSValueRef?
        // The refresh is never called: the counter does not move here, so a native stands in for it.
        let arguments: [JSValueRef?] = [function, validate, validate]
        guard let returned = JSObjectCallAsFunction(context, maker, nil, 3, arguments, &exception), exception == nil,
              let caller = JSValueToObject(context, returned, nil) else { preconditionFailure("no calling function") }
        JSValueProtect(context, caller)
        defer { JSValueUnprotect(context, caller) }
        return callWithValues(count, caller) { index in
            let (id, name, quantity, price) = Self.item(index)
            return JSObjectMake(self.context, Self.handleClass,
                                Unmanaged.passRetained(ItemBox(id: id, name: name, quantity: quantity, price: price)).toOpaque())
        }
    }

    /// Calls `caller(id, name, quantity, price, originalQuantity)` once per item, nested in one
    /// entry; the number of calls that threw.
    /// With `handle`, its object is passed first.
    private func callWithValues(_ count: Int, _ caller: JSObjectRef, handle: ((Int) -> JSObjectRef?)? = nil) -> Int {
        // The rule sees the values: a quantity of 0 is refused.
        var refused: JSValueRef?
        let probe: [JSValueRef?] = (handle == nil ? [] : [JSValueMakeNull(context)]) + [1, 0, 0, 10, 1].map { JSValueMakeNumber(context, $0) }
        _ = JSObjectCallAsFunction(context, caller, nil, probe.count, probe, &refused)
        precondition(refused != nil, "the rule did not see the row's values")
        var failures = 0
        runInsideOneEntry {
            for index in 0..<count {
                let (id, name, quantity, price) = Self.item(index)
                let text = JSStringCreateWithUTF8CString(name)
                let arguments: [JSValueRef?] = (handle.map { [$0(index)] } ?? []) + [
                    JSValueMakeNumber(self.context, id), JSValueMakeString(self.context, text), JSValueMakeNumber(self.context, quantity + 1),
                    JSValueMakeNumber(self.context, price), JSValueMakeNumber(self.context, quantity),
                ]
                JSStringRelease(text)
                var exception: JSValueRef?
                _ = JSObjectCallAsFunction(self.context, caller, nil, arguments.count, arguments, &exception)
                if exception != nil { failures += 1 }
            }
        }
        return failures
    }

    /// An item's values behind a callback object.
    private final class ItemBox {
        let id: Double, name: String, quantity: Double, price: Double
        init(id: Double, name: String, quantity: Double, price: Double) {
            (self.id, self.name, self.quantity, self.price) = (id, name, quantity, price)
        }
    }

    // Made once; JavaScriptCore classes may be used from any thread.
    nonisolated(unsafe) private static let handleClass: JSClassRef = {
        var definition = kJSClassDefinitionEmpty
        definition.className = UnsafePointer(strdup("ItemHandle"))
        definition.attributes = JSClassAttributes(kJSClassAttributeNoAutomaticPrototype)
        definition.finalize = { object in
            guard let object, let pointer = JSObjectGetPrivate(object) else { return }
            Unmanaged<ItemBox>.fromOpaque(pointer).release()
        }
        return JSClassCreate(&definition)
    }()

    // Made once; JavaScriptCore classes may be used from any thread.
    nonisolated(unsafe) private static let callbackClass: JSClassRef = {
        var definition = kJSClassDefinitionEmpty
        definition.className = UnsafePointer(strdup("Item"))
        definition.attributes = JSClassAttributes(kJSClassAttributeNoAutomaticPrototype)
        definition.getProperty = { context, object, name, _ in
            guard let context, let object, let name, let pointer = JSObjectGetPrivate(object) else { return nil }
            let box = Unmanaged<ItemBox>.fromOpaque(pointer).takeUnretainedValue()
            if JSStringIsEqualToUTF8CString(name, "ItemId") { return JSValueMakeNumber(context, box.id) }
            if JSStringIsEqualToUTF8CString(name, "Quantity") { return JSValueMakeNumber(context, box.quantity) }
            if JSStringIsEqualToUTF8CString(name, "UnitPrice") { return JSValueMakeNumber(context, box.price) }
            if JSStringIsEqualToUTF8CString(name, "Name") {
                let text = JSStringCreateWithUTF8CString(box.name)
                defer { JSStringRelease(text) }
                return JSValueMakeString(context, text)
            }
            return nil
        }
        definition.finalize = { object in
            guard let object, let pointer = JSObjectGetPrivate(object) else { return }
            Unmanaged<ItemBox>.fromOpaque(pointer).release()
        }
        return JSClassCreate(&definition)
    }()
}
#endif

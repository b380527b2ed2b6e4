// The rule environment every engine gives scripts: one file, run by JavaScriptCore on every Swift
// site (ScriptContext installs it into each context) and by the JavaScript client in the browser
// (into the realm its rules run in), so dates, and the change objects delta events are given,
// are the same everywhere.
//
// Rules see UTC whatever the host's time zone (which stays as it is): the local-time methods of
// `Date` are its UTC methods, `new Date(2026, 0, 15, 9, 30)` and a date and time without an offset
// (`'2026-01-15T09:30'`) are UTC, `getTimezoneOffset()` is 0, and dates are shown (`toString`,
// `toLocaleString`, `Intl.DateTimeFormat`) in UTC.

export function installUTCDates(global, relata) {
    const NativeDate = global.Date, proto = NativeDate.prototype;
    relata.NativeDate = NativeDate;   // for Relata's generated code: a time value needs no wrapper
    const nativeOffset = proto.getTimezoneOffset;
    const define = (object, name, value) => Object.defineProperty(object, name, { value, writable: true, configurable: true, enumerable: false });
    for (const part of ['FullYear', 'Month', 'Date', 'Day', 'Hours', 'Minutes', 'Seconds', 'Milliseconds']) {
        define(proto, 'get' + part, proto['getUTC' + part]);
        if (part !== 'Day') define(proto, 'set' + part, proto['setUTC' + part]);
    }
    define(proto, 'getTimezoneOffset', function getTimezoneOffset() { return isNaN(this.getTime()) ? NaN : 0; });
    const parts = (date) => date.toUTCString().replace(',', '').split(' ');   // [weekday, day, month, year, time, 'GMT']
    const valid = (date) => !isNaN(date.getTime());
    define(proto, 'toString', function toString() {
        if (!valid(this)) return 'Invalid Date';
        const [w, d, m, y, t] = parts(this);
        return w + ' ' + m + ' ' + d + ' ' + y + ' ' + t + ' GMT+0000 (Coordinated Universal Time)';
    });
    define(proto, 'toDateString', function toDateString() {
        if (!valid(this)) return 'Invalid Date';
        const [w, d, m, y] = parts(this);
        return w + ' ' + m + ' ' + d + ' ' + y;
    });
    define(proto, 'toTimeString', function toTimeString() {
        return valid(this) ? parts(this)[4] + ' GMT+0000 (Coordinated Universal Time)' : 'Invalid Date';
    });
    const inUTC = (options) => Object.assign({ timeZone: 'UTC' }, options);
    for (const name of ['toLocaleString', 'toLocaleDateString', 'toLocaleTimeString']) {
        const native = proto[name];
        define(proto, name, function (locales, options) { return native.call(this, locales, inUTC(options)); });
    }
    // Text with a date and time but no offset is local time to JavaScript: here it is UTC.
    const hasZone = /(Z|z|GMT|UTC|[+-]\d\d:?\d\d)\s*(\(.*\))?\s*$/;
    const hasTime = /\d:\d\d/;
    const parse = function parse(text) {
        const string = String(text), time = NativeDate.parse(string);
        if (isNaN(time) || !hasTime.test(string) || hasZone.test(string)) return time;
        return time - nativeOffset.call(new NativeDate(time)) * 60000;
    };
    const UTCDate = function Date(...args) {
        if (new.target === undefined) return new UTCDate().toString();
        if (args.length >= 2) return Reflect.construct(NativeDate, [NativeDate.UTC(...args)], new.target);
        if (args.length === 1 && typeof args[0] === 'string') return Reflect.construct(NativeDate, [parse(args[0])], new.target);
        return Reflect.construct(NativeDate, args, new.target);
    };
    UTCDate.prototype = proto;
    Object.defineProperty(UTCDate, 'prototype', { writable: false });
    define(proto, 'constructor', UTCDate);
    define(UTCDate, 'UTC', NativeDate.UTC);
    define(UTCDate, 'now', NativeDate.now);
    define(UTCDate, 'parse', parse);
    define(global, 'Date', UTCDate);
    const Intl = global.Intl;
    if (typeof Intl === 'object' && Intl.DateTimeFormat) {
        const NativeFormat = Intl.DateTimeFormat;
        const UTCFormat = function DateTimeFormat(locales, options) { return new NativeFormat(locales, inUTC(options)); };
        UTCFormat.prototype = NativeFormat.prototype;
        define(UTCFormat, 'supportedLocalesOf', NativeFormat.supportedLocalesOf);
        define(Intl, 'DateTimeFormat', UTCFormat);
    }
}

// The delta and change objects the delta events are given (`beforeProcessDeltaChange(delta,
// change)`), the same on every site: a change is `{ type, changeId, changeID, oldValues,
// newValues, status, message }`, and `isInsert`, `isUpdate`, `isDelete`, `failed`, `error` and
// `change.Field` (the new value, else the old one) are read through a prototype the changes with
// the same field names share — made once per list of names, not per change: accessors defined on
// every change cost about eight times the rest of it. Read through `this`, they see the change's
// own properties; a field named like one of those is left to the change's own. Lists are few; the
// map is emptied should a delta bring many. `JSON.stringify` and `Object.hasOwn` are kept as they
// were before any script ran.
export function installChangeObjects(relata) {
    const ownNames = new Set(['type', 'changeId', 'changeID', 'oldValues', 'newValues', 'status', 'message']);
    const prototypes = new Map();
    const stringify = JSON.stringify, hasOwn = Object.hasOwn;
    relata.changePrototype = function (names) {
        const key = stringify(names);
        let prototype = prototypes.get(key);
        if (prototype !== undefined) return prototype;
        prototype = {
            get isInsert() { return this.type === 'insert'; },
            get isUpdate() { return this.type === 'update'; },
            get isDelete() { return this.type === 'delete'; },
            get failed() { return this.status === 'failed'; },
            get error() { return this.message; },
        };
        for (const name of names) {
            if (ownNames.has(name) || hasOwn(prototype, name)) continue;
            Object.defineProperty(prototype, name, {
                enumerable: true,
                get() {
                    const newValues = this.newValues;
                    return hasOwn(newValues, name) ? newValues[name] : this.oldValues[name];
                },
            });
        }
        if (prototypes.size >= 256) prototypes.clear();
        prototypes.set(key, prototype);
        return prototype;
    };
    // A literal, so its properties are defined, not assigned: no setter a script put on
    // Object.prototype is reached.
    relata.change = function (prototype, type, changeId, oldValues, newValues, status, message) {
        return { __proto__: prototype, type, changeId, changeID: changeId, oldValues, newValues, status, message };
    };
    // The delta object of a delta's change objects (`changes` is a copy: a script may replace its elements).
    relata.delta = function (name, changes) {
        const delta = {};
        for (const [key, value] of [['name', name], ['count', changes.length], ['length', changes.length], ['changes', changes.slice()]])
            Object.defineProperty(delta, key, { value, enumerable: true, writable: false, configurable: false });
        for (let i = 0; i < changes.length; i++) delta[i] = changes[i];
        return delta;
    };
}

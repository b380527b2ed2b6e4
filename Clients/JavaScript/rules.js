// The schema's rule scripts, run in the page as rows change — the same scripts, events, order and
// globals as on every other site (Documentation/Rules.md). The page's own JavaScript engine runs
// them; a data server runs them again on the user's edits, so nothing here is trusted.

import { RelataError } from './errors.js';
import { rowsWhere } from './expressions.js';
import { asRules } from './table.js';
import { installUTCDates } from './rule-environment.js';
import { copyValue, describe, isDate } from './values.js';

/** The row events, in the order a post runs them, with their parameters. */
export const rowEvents = Object.freeze(['onNewRow', 'beforePost', 'beforeInsert', 'beforeUpdate', 'beforeDelete']);

/** The events a script may define (all of them, so a script's other handlers are found by name too). */
const allEvents = [...rowEvents, 'beforeProcessDelta', 'beforeProcessDeltaChange', 'afterProcessDeltaChange', 'afterProcessDelta',
    'beforeCommit', 'afterCommit', 'afterRollback', 'beforeGetData', 'afterGetData', 'afterLogin'];

/** The globals a script sees, as the parameters of the function its text becomes. */
const globalNames = ['fail', 'log', 'newGuid', 'isServer', 'session', 'lda', 'schema'];

const identifier = /^[A-Za-z_$][\w$]*$/;

/** A `fail(…)`: a refusal on purpose, carried up to the call that ran the event. */
class Refusal {
    constructor(message, location) {
        this.message = message;
        this.location = location;
    }
}

/** How many lines a `new Function` puts before its body in this engine (2 in V8), found once. */
let bodyLineOffset = null;
function lineOffset() {
    if (bodyLineOffset === null) {
        const probe = new Function('return new Error().stack;\n//# sourceURL=relata-probe.js');
        const match = /relata-probe\.js:(\d+):\d+/.exec(String(probe()));
        bodyLineOffset = match ? Number(match[1]) - 1 : 0;
    }
    return bodyLineOffset;
}

/** Whether a thrown value is an `Error` of any realm. */
function isError(value) {
    return Object.prototype.toString.call(value) === '[object Error]' || (value !== null && typeof value === 'object' && typeof value.stack === 'string' && 'message' in value);
}

/**
 * Where rules run: in a page, a realm of their own (a hidden frame) whose dates are UTC, as they
 * are on every other site — the page's own `Date` stays as it is; elsewhere (Node) this realm.
 */
let pageRealm = null;
function defaultRealm() {
    if (typeof document === 'undefined' || !document.createElement) return globalThis;
    if (pageRealm) return pageRealm;
    const frame = document.createElement('iframe');
    frame.hidden = true;
    frame.setAttribute('aria-hidden', 'true');
    frame.title = 'Relata rules';
    (document.body ?? document.documentElement).appendChild(frame);
    pageRealm = frame.contentWindow;
    installUTCDates(pageRealm, {});
    return pageRealm;
}

/** A value as a script of `realm` sees it: its own realm's `Date` and `Uint8Array`. */
function toRealm(value, realm) {
    if (realm === globalThis || value === null || typeof value !== 'object') return value;
    if (isDate(value)) return new realm.Date(value.getTime());
    if (ArrayBuffer.isView(value)) return new realm.Uint8Array(value);
    return value;
}

/** The first place in a stack that is in one of the rule scripts: `{file, line, column}`. */
function scriptLocation(stack, files) {
    for (const line of String(stack ?? '').split('\n')) {
        const match = /\(?([^\s()]+):(\d+):(\d+)\)?\s*$/.exec(line);
        if (match && files.has(match[1])) {
            return { file: match[1], line: Number(match[2]) - lineOffset(), column: Number(match[3]) };
        }
    }
    return {};
}

/** A script's text made into the function that runs its top level and returns its handlers. */
function compile(script, extraNames, realm) {
    const names = [...new Set([...allEvents, ...extraNames])].filter((name) => identifier.test(name));
    const handlers = names.map((name) => `${JSON.stringify(name)}: typeof ${name} === 'function' ? ${name} : undefined`).join(', ');
    const file = script.name.replace(/[\s()]/g, '_');
    const body = `${script.source}\n;return {${handlers}};\n//# sourceURL=${file}`;
    try {
        return { file, run: new realm.Function(...globalNames, body) };
    } catch (error) {
        throw new RelataError('ruleError', `${script.name}: ${error.message}`, { file: script.name });
    }
}

/**
 * The rules of a schema, compiled once: each table's script and the schema-wide script, each in a
 * scope of its own with the globals `fail`, `log`, `newGuid`, `isServer` (false), `session`,
 * `lda` and `schema`.
 *
 * @example
 * const rules = new RuleSet(schemaAnswer.schema, { session, tables: () => client.tables });
 * orders.rules = rules;     // what fetchTables does for every table it makes
 */
export class RuleSet {
    /**
     * @param {object} schema the `schema` of a GetSchema answer
     * @param {{session?: {values: object, roles: string[]}, tables?: () => Map<string, import('./table.js').DataTable>,
     *          log?: (line: string, details: object) => void}} [environment]
     */
    constructor(schema, environment = {}) {
        this.schema = schema;
        this.environment = environment;
        this.realm = environment.realm ?? defaultRealm();
        this.files = new Set();
        this.scopes = new Map();
        const calculatedFunctions = schema.tables.flatMap((table) => (table.calculatedFields ?? []).map((field) => field.function));
        this.globals = this.makeGlobals();
        const load = (shared) => {
            if (!shared || typeof shared.source !== 'string') return null;
            const script = { name: shared.fileName ?? shared.name ?? 'script.js', source: shared.source };
            const compiled = compile(script, calculatedFunctions, this.realm);
            this.files.add(compiled.file);
            let handlers;
            try {
                handlers = this.call(() => compiled.run(...globalNames.map((name) => this.globals[name])), { event: 'load', script: script.name });
            } catch (error) {
                throw error instanceof RelataError ? error : new RelataError('ruleError', String(error));
            }
            return { name: script.name, handlers };
        };
        this.schemaScope = load(schema.script);
        for (const table of schema.tables) this.scopes.set(table.name.toLowerCase(), load(table.script));
    }

    /** The scripts an event of a table runs in: the table's, then the schema-wide one. */
    scopesOf(table) {
        return [this.scopes.get(table.toLowerCase()), this.schemaScope].filter(Boolean);
    }

    /**
     * Runs a row event of a table's row in each of its scripts. A `fail()` throws a `RelataError`
     * (`refused`), anything else a script throws one with code `ruleError`; both name the event,
     * table, row, script file, line and column.
     */
    run(event, table, row, old) {
        const view = this.rowView(table, row);
        const oldView = old ? Object.freeze(Object.fromEntries(Object.entries(old).map(([name, value]) => [name, toRealm(value, this.realm)]))) : undefined;
        for (const scope of this.scopesOf(table.name)) {
            const handler = scope.handlers[event];
            if (!handler) continue;
            const result = this.call(() => handler(view, oldView), { event, table: table.name, row: row.label, script: scope.name });
            if (result && typeof result.then === 'function') {
                throw new RelataError('ruleError', `${event} returned a promise: handlers run synchronously (a fail() after an await would be lost)`,
                    { event, table: table.name, row: row.label, file: scope.name });
            }
        }
    }

    /** A calculated field's value: its function of the table's script, given the row. */
    calculate(table, row, field) {
        const scope = this.scopes.get(table.name.toLowerCase());
        let fn = scope?.handlers[field.function];
        if (!fn && /^\s*function\s*\(/.test(field.function)) {
            fn = new this.realm.Function(`return (${field.function});`)();
        }
        if (!fn) throw new RelataError('calculationFailed', `the script has no function ${field.function}`, { table: table.name, field: field.name });
        return copyValue(this.call(() => fn(this.rowView(table, row)), { event: 'calculate', table: table.name, row: row.label, script: scope?.name }));
    }

    /** Runs script code, turning what it throws into a `RelataError` with its place. */
    call(body, place) {
        try {
            return asRules(body);
        } catch (thrown) {
            // A refusal or broken rule of a nested event (a write through lda) keeps its own place.
            if (thrown instanceof RelataError && (thrown.code === 'refused' || thrown.code === 'ruleError')) throw thrown;
            const details = { event: place.event, table: place.table, row: place.row };
            if (thrown instanceof Refusal) {
                throw new RelataError('refused', thrown.message, { ...details, ...thrown.location });
            }
            const location = isError(thrown) ? scriptLocation(thrown.stack, this.files) : {};
            // A bad write or read of a field (RelataError) says what it is; a script's own error its kind.
            const message = thrown instanceof RelataError ? thrown.message : isError(thrown) ? `${thrown.name}: ${thrown.message}` : `${describeThrown(thrown)}`;
            if (thrown instanceof RelataError && thrown.field) details.field = thrown.field;
            throw new RelataError('ruleError', message, { ...details, file: location.file ?? place.script, line: location.line, column: location.column });
        }
    }

    /** The object a script gets as `row`: a property per field (and per calculated or lookup field), nothing else. */
    rowView(table, row) {
        if (row.view && row.view.table === table) return row.view.object;
        const object = Object.create(null);
        const fieldError = (name) => new RelataError('unknownField', `${table.name} has no field '${String(name)}'`, { table: table.name, field: String(name) });
        for (const field of table.fields) {
            Object.defineProperty(object, field.name, {
                enumerable: true,
                get: () => toRealm(row.get(field.name), this.realm),
                set: (value) => row.setFromRule(field.name, value),
            });
        }
        for (const field of [...table.lookupFields, ...table.calculatedFields]) {
            Object.defineProperty(object, field.name, { enumerable: false, get: () => toRealm(row.get(field.name), this.realm), set: () => { throw new RelataError('readOnlyField', 'the field is calculated', { table: table.name, field: field.name }); } });
        }
        const proxy = new Proxy(object, {
            get(target, name) {
                if (typeof name === 'symbol') return name === Symbol.toPrimitive ? undefined : target[name];
                if (name in target) return target[name];
                if (name === 'toJSON') return undefined;
                throw fieldError(name);
            },
            set(target, name, value) {
                if (typeof name !== 'symbol' && name in target) { target[name] = value; return true; }
                throw fieldError(name);
            },
            has(target, name) {
                if (typeof name !== 'symbol' && !(name in target)) throw fieldError(name);
                return true;
            },
        });
        row.view = { table, object: proxy };
        return proxy;
    }

    /**
     * `lda`: the tables the page has fetched, read and written as the rules see them. A row being
     * posted is found by its values before the change; a row being inserted is not found.
     */
    makeDataAccess() {
        const rules = this;
        const environment = this.environment;
        const tableNamed = (name, call) => {
            const table = environment.tables?.().get(String(name).toLowerCase());
            if (!table) {
                throw new RelataError('unknownTable', `lda.${call}: the page has not fetched ${name} (fetch it before the rules read it; the client fetches the tables a table's rules name with it)`, { table: String(name) });
            }
            return table;
        };
        const visible = (row) => row.state !== 'deleted' && row.state !== 'addedInEditMode';
        const byKey = (table, key, call) => {
            if (key !== null && typeof key === 'object' && !Array.isArray(key) && !isDate(key)) {
                const row = table.rows.find((candidate) => candidate.view?.object === key);
                if (!row) throw new RelataError('rowNotFound', `lda.${call}: the row given is not a row of ${table.name}`, { table: table.name });
                return row;
            }
            const keys = Array.isArray(key) ? key : [key];
            if (keys.length !== table.keyIndexes.length) {
                throw new RelataError('invalidArgument', `lda.${call}: ${table.name} has ${table.keyIndexes.length} key field(s); ${keys.length} value(s) given`, { table: table.name });
            }
            return table.rows.find((row) => visible(row) && table.keyIndexes.every((index, position) => row.values[index] === keys[position])) ?? null;
        };
        const valuesObject = (values, call) => {
            if (values === null || typeof values !== 'object') throw new RelataError('invalidArgument', `lda.${call}: the values are not an object`);
            return Object.entries(values);
        };
        return {
            select(tableName, ...key) {
                const table = tableNamed(tableName, 'select');
                const row = byKey(table, key.length === 1 ? key[0] : key, 'select');
                return row ? rules.rowView(table, row) : null;
            },
            selectWhere(tableName, where, parameters = {}) {
                const table = tableNamed(tableName, 'selectWhere');
                const given = {};
                for (const [name, value] of Object.entries(parameters ?? {})) given[name] = plain(value);
                return rules.realm.Array.from(rowsWhere(table, where, given, visible), (row) => rules.rowView(table, row));
            },
            insert(tableName, values = {}) {
                const table = tableNamed(tableName, 'insert');
                const row = table.addRow(Object.fromEntries(valuesObject(values, 'insert')));
                return rules.rowView(table, row);
            },
            update(tableName, key, values = {}) {
                const table = tableNamed(tableName, 'update');
                const row = byKey(table, key, 'update');
                if (!row) throw new RelataError('rowNotFound', `lda.update: ${table.name} has no row with key ${JSON.stringify(key)}`, { table: table.name });
                row.setValues(Object.fromEntries(valuesObject(values, 'update')));
                return rules.rowView(table, row);
            },
            remove(tableName, key) {
                const table = tableNamed(tableName, 'remove');
                const row = byKey(table, key, 'remove');
                if (!row) throw new RelataError('rowNotFound', `lda.remove: ${table.name} has no row with key ${JSON.stringify(key)}`, { table: table.name });
                row.remove();
            },
            sql() {
                throw new RelataError('invalidArgument', 'lda.sql runs where the data is (offline, on a data server, and in the Swift client); in the browser, the page reads DA SQL with client.query before its rules need the answer');
            },
        };
    }

    makeGlobals() {
        const environment = this.environment;
        const rules = this;
        const session = Object.create(null);
        for (const [key, value] of Object.entries(environment.session?.values ?? {})) session[key] = toRealm(value, this.realm);
        Object.defineProperty(session, 'roles', { value: Object.freeze([...(environment.session?.roles ?? [])]) });
        Object.defineProperty(session, 'hasRole', { value: (role) => session.roles.includes(role) });
        const schema = { tables: this.schema.tables.map((table) => table.name) };
        for (const table of this.schema.tables) {
            schema[table.name] = Object.freeze({
                fields: Object.freeze(table.fields.map((field) => Object.freeze({
                    name: field.name, type: field.type, size: field.size ?? 0, required: !!field.required,
                    readOnly: !!field.readOnly, primaryKey: !!field.primaryKey,
                }))),
            });
        }
        return {
            fail(message) {
                const text = typeof message === 'string' ? message : JSON.stringify(message) ?? String(message);
                throw new Refusal(text, scriptLocation(new Error().stack, rules.files));
            },
            log(...values) {
                const line = values.map((value) => (typeof value === 'string' ? value : describeThrown(value))).join(' ');
                const location = scriptLocation(new Error().stack, rules.files);
                (environment.log ?? ((text) => console.info(text)))(line, location);
            },
            newGuid() {
                return (globalThis.crypto?.randomUUID?.() ?? fallbackUUID()).toUpperCase();
            },
            isServer: false,
            session: Object.freeze(session),
            lda: Object.freeze(this.makeDataAccess()),
            schema: Object.freeze(schema),
        };
    }
}

/** A parameter of `lda.selectWhere` as the expression reads it (a row's GUID or date stays what it is). */
function plain(value) {
    return value === undefined ? null : copyValue(value);
}

function describeThrown(value) {
    if (isError(value)) return `${value.name}: ${value.message}`;
    if (typeof value === 'string') return value;
    try { return JSON.stringify(value) ?? String(value); } catch { return describe(value); }
}

/** A random (version 4) UUID where the engine has no `crypto.randomUUID` (Node 18, pages not served over HTTPS). */
function fallbackUUID() {
    const hex = Array.from({ length: 32 }, () => Math.floor(Math.random() * 16).toString(16));
    hex[12] = '4';
    hex[16] = (8 + Math.floor(Math.random() * 4)).toString(16);
    const text = hex.join('');
    return `${text.slice(0, 8)}-${text.slice(8, 12)}-${text.slice(12, 16)}-${text.slice(16, 20)}-${text.slice(20)}`;
}

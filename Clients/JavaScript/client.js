// The protocol (Documentation/Protocol.md) from a page or from Node: login, the schema and its
// rules, reads as JSON or as the binary row stream, DA SQL, applies with an apply id, commands.

import { RelataError } from './errors.js';
import { RowStreamDecoder } from './rowstream.js';
import { RuleSet } from './rules.js';
import { DataTable } from './table.js';
import { failureOf, validateDeltas } from './validation.js';
import { fromPlainJSON, fromTagged } from './values.js';

const rowStreamType = 'application/vnd.relata.rows';

/** Waits `ms` milliseconds. */
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A connection to a Relata data server: one user's session, the schema with its rules, and the
 * tables fetched, whose rows run the rules as they change.
 *
 * @example
 * import { RelataClient } from '/client/relata.js';
 * const client = new RelataClient({ baseURL: 'http://127.0.0.1:7099' });
 * await client.login({ user: 'ann', password: 'secret' });
 * const [clients] = await client.fetchTables([{ table: 'Clients' }]);
 * clients.rows[0].set('ClientName', 'Initech');        // Clients.js's beforeUpdate runs here
 * const { failed } = await client.applyChanges();      // the server runs the rules again on the edits
 */
export class RelataClient {
    /**
     * @param {{baseURL?: string, schema?: string, fetch?: typeof fetch, retries?: number, retryDelay?: number,
     *          log?: (line: string, location: object) => void}} [options]
     *   `schema`: the schema's name when the server serves several (`DataService.<schema>`);
     *   `retries`: how many times an apply whose answer did not come is sent again (3).
     */
    constructor({ baseURL = '', schema, fetch: fetchFunction, retries = 3, retryDelay = 250, log } = {}) {
        this.baseURL = baseURL.replace(/\/+$/, '');
        this.service = schema ? `DataService.${schema}` : 'DataService';
        this.fetchFunction = fetchFunction ?? ((...args) => globalThis.fetch(...args));
        this.retries = retries;
        this.retryDelay = retryDelay;
        this.log = log;
        /** The session token of the last login (null when logged out). */
        this.token = null;
        /** The session's values and roles. */
        this.session = null;
        /** Whether the session may call `AdminService` (one of the server's `console.adminRoles`). */
        this.isAdmin = false;
        /** The last GetSchema answer: `{schema, version, allowed, rolesAllowed}`. */
        this.schemaAnswer = null;
        /** @type {RuleSet|null} */
        this.rules = null;
        /** The tables fetched, by lower-cased name. @type {Map<string, DataTable>} */
        this.tables = new Map();
        /** A batch sent whose answer did not come: sent again, with its apply id, before anything else. */
        this.unansweredApply = null;
        /** Called with the new version when the server's rules change under the page. */
        this.onRulesChanged = null;
        /** Whether an apply is validated in the page first (`validate`): changes that would fail are not sent. */
        this.validatesChangesLocally = true;
        /** Rows the server's new rules refused when they replaced stale ones (their changes fail in the page). */
        this.refusedByNewRules = null;
    }

    /**
     * Logs in: `{user, password, domain?, schema?}` or a login string (`User=ann;Password=…`).
     * @returns {Promise<{values: object, roles: string[]}>} the session
     */
    async login(credentials) {
        const loginString = typeof credentials === 'string' ? credentials
            : Object.entries({ User: credentials.user, Password: credentials.password, Domain: credentials.domain, Schema: credentials.schema })
                .filter(([, value]) => value !== undefined && value !== null && value !== '')
                .map(([key, value]) => `${key}=${value}`).join(';');
        const answer = await this.call('LoginService', 'Login', { loginString });
        this.token = answer.token;
        // The session's values come tagged (`{"string": "ann"}`); the page and the rules see them plain.
        const values = {};
        for (const [key, value] of Object.entries(answer.session?.values ?? {})) values[key] = fromTagged(value);
        this.session = { values, roles: answer.session?.roles ?? [] };
        this.isAdmin = answer.admin === true;
        this.rules = null;
        this.schemaAnswer = null;
        return this.session;
    }

    /** Ends the session (on the server too). */
    async logout() {
        if (!this.token) return;
        try {
            await this.call('LoginService', 'Logout', {});
        } finally {
            this.token = null;
            this.session = null;
            this.isAdmin = false;
        }
    }

    /**
     * For a session with one of the server's admin roles: the server's health, the sessions of
     * the session's domain (never their tokens) and the refusals its users met lately, newest first.
     * @returns {Promise<{server: {protocol: string, started: string, uptimeSeconds: number}, domain: string,
     *   health: {status: string, checks: object[]}, sessions: object[], refusals: object[]}>}
     */
    async serverOverview() {
        return this.call('AdminService', 'Overview', {});
    }

    /** The schema, its rules version and what the session may do; the rules are compiled for the tables. */
    async getSchema() {
        const answer = await this.call(this.service, 'GetSchema', {});
        this.useSchema(answer);
        return answer;
    }

    useSchema(answer) {
        const changed = this.schemaAnswer && this.schemaAnswer.version !== answer.version;
        const same = this.rules && !changed;
        this.schemaAnswer = answer;
        if (same) return;
        this.rules = new RuleSet(answer.schema, { session: this.session ?? undefined, tables: () => this.tables, log: this.log });
        for (const table of this.tables.values()) this.attach(table);
        if (changed && this.onRulesChanged) this.onRulesChanged(answer.version);
    }

    /** A table definition of the schema, by name. */
    definition(name) {
        return this.schemaAnswer?.schema.tables.find((table) => table.name.toLowerCase() === String(name).toLowerCase()) ?? null;
    }

    attach(table) {
        const definition = this.definition(table.name);
        table.rules = definition ? this.rules : null;
        table.foreignKeys = definition?.foreignKeys ?? [];
        table.lookupTables = this.tables;
        if (definition) {
            table.lookupFields = definition.lookupFields ?? [];
            table.calculatedFields = definition.calculatedFields ?? [];
        }
    }

    /**
     * Reads tables: each request `{table, fields?, where?, parameters?, maxRecords?}` (or `{table, sql}`).
     * The tables replace those of the same name the client held.
     * @param {object[]} requests
     * @param {{binary?: boolean}} [options] `binary` (the default) asks for the row stream
     * @returns {Promise<DataTable[]>}
     */
    async fetchTables(requests, { binary = true, withRuleTables = true } = {}) {
        if (!this.schemaAnswer) await this.getSchema();
        const tables = binary ? await this.readRowStream('GetData', { requests }) : await this.readJSON('GetData', { requests });
        tables.forEach((table, index) => {
            const request = requests[index] ?? {};
            if (request.sql) {
                table.readOnly = true;
                return;
            }
            // Whole: every row of the table (what a foreign-key check in the page may rely on).
            table.complete = !request.where && !request.fields && (request.maxRecords === undefined || request.maxRecords === null || table.rows.length < request.maxRecords);
            this.attach(table);
            this.tables.set(table.name.toLowerCase(), table);
        });
        if (withRuleTables) {
            // A table the rules read must be whole (a filtered one would say a row is missing); one with
            // changes not yet applied is kept as it is.
            const missing = this.tablesTheRulesRead().filter((name) => {
                const held = this.tables.get(name.toLowerCase());
                return !held || (!held.complete && !held.hasChanges && !tables.includes(held));
            });
            if (missing.length > 0) await this.fetchTables(missing.map((table) => ({ table })), { binary, withRuleTables });
        }
        return tables;
    }

    /**
     * The tables the rules of the tables held read or write through `lda` (named as a string
     * literal: `lda.select('Clients', …)`) and their lookup fields show, which the page fetches
     * with them so the rules run as they do where the data is.
     */
    tablesTheRulesRead() {
        const schema = this.schemaAnswer.schema;
        const named = new Set();
        const scan = (script) => {
            for (const match of String(script?.source ?? '').matchAll(/\blda\s*\.\s*(?:select|selectWhere|insert|update|remove)\s*\(\s*(['"])([^'"\\]+)\1/g)) named.add(match[2].toLowerCase());
        };
        const held = [...this.tables.keys()];
        if (held.length > 0) scan(schema.script);
        for (const name of held) {
            const definition = this.definition(name);
            if (!definition) continue;
            scan(definition.script);
            for (const lookup of definition.lookupFields ?? []) named.add(lookup.lookupTable.toLowerCase());
        }
        const readable = (definition) => !this.schemaAnswer.allowed || (this.schemaAnswer.allowed[definition.name] ?? []).includes('read');
        return schema.tables.filter((definition) => named.has(definition.name.toLowerCase()) && readable(definition)).map((definition) => definition.name);
    }

    /** One table: `fetchTable('Orders', {where: 'ClientId = :c', parameters: {c: {integer: 7}}})`. */
    async fetchTable(name, options = {}) {
        const [table] = await this.fetchTables([{ table: name, ...options }]);
        return table;
    }

    /**
     * A DA SQL query's answer as a read-only table (Documentation/DASQL.md).
     * @param {string} sql
     * @param {{parameters?: object, maxRecords?: number, name?: string, binary?: boolean}} [options]
     */
    async query(sql, { parameters, maxRecords, name, binary = true } = {}) {
        const body = { sql, parameters: parameters ?? {}, maxRecords: maxRecords ?? null, name: name ?? null };
        const [table] = binary ? await this.readRowStream('SQLGetData', body) : await this.readJSON('SQLGetData', body);
        table.readOnly = true;
        return table;
    }

    /** Runs a server command: `{result, deltas}`. */
    async executeCommand(command, parameters = {}) {
        return this.call(this.service, 'ExecuteCommand', { command, parameters });
    }

    async readJSON(method, body) {
        const answer = await this.call(this.service, method, body);
        const tables = (answer.tables ?? []).map((data) => {
            const table = new DataTable(data.name, data.fields);
            table.load(data.rows.map((row) => row.map((value, index) => fromPlainJSON(value, data.fields[index]))));
            return table;
        });
        if (answer.error) throw RelataError.fromAnswer(200, { error: answer.error });
        if (answer.schema) this.useSchema(answer.schema);
        return tables;
    }

    async readRowStream(method, body) {
        const response = await this.send(this.service, method, body, { accept: rowStreamType });
        if (!response.ok) throw await this.errorOf(response);
        const decoder = new RowStreamDecoder();
        const tables = [];
        let current = null;
        const handle = (frame) => {
            switch (frame.kind) {
            case 'schema': this.useSchema(frame.schema); break;
            case 'table': current = new DataTable(frame.name, frame.fields); tables.push(current); break;
            case 'rows': current.load(frame.rows); break;
            case 'error': throw RelataError.fromAnswer(response.status, frame.error);
            default: break;
            }
        };
        if (response.body && typeof response.body.getReader === 'function') {
            const reader = response.body.getReader();
            for (;;) {
                const { done, value } = await reader.read();
                if (done) break;
                for (const frame of decoder.push(value)) handle(frame);
            }
        } else {
            for (const frame of decoder.push(new Uint8Array(await response.arrayBuffer()))) handle(frame);
        }
        decoder.finish();
        return tables;
    }

    /**
     * Applies every pending change of the tables (all the client holds by default), in the schema's
     * update order: checked against what the session may do, sent with an apply id and the rules
     * version, and folded back — resolved changes become originals (new rows get their real keys),
     * failed ones keep what the user typed with `row.failure`. An apply whose answer did not come is
     * sent again with the same id (the server answers it from its record, applying nothing twice).
     * When the server's rules changed, they are downloaded, the changes checked again, and sent once more.
     * @param {DataTable[]} [tables]
     * @returns {Promise<{deltas: object[], failed: {table: string, row: import('./table.js').DataRow, failure: object}[]}>}
     */
    async applyChanges(tables = [...this.tables.values()]) {
        if (!this.schemaAnswer) await this.getSchema();
        if (this.unansweredApply) await this.deliver(this.unansweredApply);
        for (let attempt = 0; ; attempt++) {
            const all = this.deltasOf(tables);
            const { sending: deltas, refused } = this.validatesChangesLocally ? this.refuseLocally(all, tables) : { sending: all, refused: [] };
            if (deltas.length === 0) {
                this.refusedByNewRules = null;
                return { deltas: refused, failed: this.failuresOf(tables) };
            }
            const byName = new Map(tables.map((table) => [table.name.toLowerCase(), table]));
            const batch = { apply: { id: newApplyId(), madeAt: Math.floor(Date.now() / 1000) }, deltas, version: this.schemaAnswer.version, tables: byName };
            try {
                const answered = await this.deliver(batch);
                this.refusedByNewRules = null;
                return { deltas: [...answered, ...refused], failed: this.failuresOf(tables) };
            } catch (error) {
                if (!(error instanceof RelataError) || error.code !== 'staleRules' || attempt > 0) throw error;
                await this.getSchema();
                this.revalidate(tables);
            }
        }
    }

    /**
     * What an apply of the tables' changes would make of each, found in the page without sending
     * anything or changing any row: the delta events, foreign keys, update rules and `beforeCommit()`
     * of the schema's rules, and what the session may do.
     * @param {DataTable[]} [tables]
     * @returns {object[]} the deltas with every change `resolved` or `failed` (with its failure)
     */
    validate(tables = [...this.tables.values()]) {
        if (!this.schemaAnswer) throw new RelataError('invalidArgument', 'validate needs the schema: call getSchema (or fetch a table) first');
        return this.validateDeltas(this.deltasOf(tables, { checkingPermissions: false }));
    }

    validateDeltas(deltas) {
        // Rows added and removed again are made and removed by the server's replay; nothing else runs for them.
        const vanished = new Set(deltas.flatMap((delta) => (this.tables.get(delta.tableName.toLowerCase())?.vanished ?? []).map((row) => `${delta.tableName.toLowerCase()}/${row.changeId}`)));
        const kept = deltas.map((delta) => ({ ...delta, changes: delta.changes.filter((change) => !vanished.has(`${delta.tableName.toLowerCase()}/${change.changeId}`)) }));
        return validateDeltas(kept, {
            rules: this.rules, tables: this.tables, schema: this.schemaAnswer.schema,
            check: (table, change) => {
                const held = this.tables.get(table.toLowerCase());
                const row = held?.rows.find((candidate) => candidate.changeId === change.changeId);
                const refused = row && this.refusedByNewRules?.get(row);
                if (refused) return refused;
                try {
                    this.checkAllowed(table, change.type);
                    return null;
                } catch (error) {
                    return { kind: 'refusal', message: error.message };
                }
            },
        });
    }

    /** The deltas to send, and those whose changes the page's validation refused (recorded on their rows). */
    refuseLocally(deltas, tables) {
        const verdicts = this.validateDeltas(deltas);
        const refused = [];
        const sending = deltas.map((delta) => {
            const verdict = verdicts.find((candidate) => candidate.tableName.toLowerCase() === delta.tableName.toLowerCase());
            const failed = (verdict?.changes ?? []).filter((change) => change.status === 'failed');
            if (failed.length === 0) return delta;
            const ids = new Set(failed.map((change) => change.changeId));
            const local = { ...delta, changes: failed };
            tables.find((table) => table.name.toLowerCase() === delta.tableName.toLowerCase())?.accept(local);
            refused.push(local);
            return { ...delta, changes: delta.changes.filter((change) => !ids.has(change.changeId)) };
        }).filter((delta) => delta.changes.length > 0);
        return { sending, refused };
    }

    /** The deltas of the tables' pending changes, in update order; refused here what the session may not do. */
    deltasOf(tables, { checkingPermissions = true } = {}) {
        const order = (this.schemaAnswer.schema.updateOrder ?? []).map((name) => name.toLowerCase());
        const rank = (table) => {
            const index = order.indexOf(table.name.toLowerCase());
            return index < 0 ? order.length : index;
        };
        const deltas = [];
        for (const table of [...tables].sort((a, b) => rank(a) - rank(b))) {
            const delta = table.makeDelta();
            if (!delta) continue;
            if (checkingPermissions && !this.validatesChangesLocally) {
                for (const type of new Set(delta.changes.map((change) => change.type))) this.checkAllowed(table.name, type);
            }
            deltas.push(delta);
        }
        return deltas;
    }

    /** Refuses, with the server's words, an operation the session's roles may not make. */
    checkAllowed(table, type) {
        const allowed = this.schemaAnswer.allowed?.[table];
        if (!allowed || allowed.includes(type)) return;
        const roles = this.session?.roles ?? [];
        const may = this.schemaAnswer.rolesAllowed?.[table]?.[type] ?? [];
        const suffix = may.length > 0 ? `; roles that may: [${may.join(', ')}]` : '; no role may';
        throw new RelataError('permissionDenied', `${type} on ${table} is not allowed for roles [${roles.join(', ')}]${suffix}`, { table });
    }

    /**
     * After the rules changed: every pending row's row rules run again with the new rules, as the
     * server will replay them; a row they refuse is remembered, and its change fails in the page.
     */
    revalidate(tables) {
        this.refusedByNewRules = new Map();
        for (const table of tables) {
            for (const row of table.pendingRows) {
                try {
                    if (row.state === 'deleted') {
                        table.rules?.run('beforeDelete', table, row);
                        continue;
                    }
                    // The row's rules run over its values as they are; what they would write is not kept.
                    row.edit();
                    try {
                        table.rules?.run('beforePost', table, row);
                        if (row.state === 'added') table.rules?.run('beforeInsert', table, row);
                        else table.rules?.run('beforeUpdate', table, row, table.oldValues(row, row.values));
                    } finally {
                        row.discard();
                    }
                } catch (error) {
                    this.refusedByNewRules.set(row, failureOf(error));
                }
            }
        }
    }

    /** Sends a batch until an answer comes, then folds it back into the tables. */
    async deliver(batch) {
        this.unansweredApply = batch;
        this.lockRows(batch, true);
        const body = { apply: batch.apply, deltas: batch.deltas };
        let answer;
        try {
            for (let attempt = 0; ; attempt++) {
                let response;
                try {
                    response = await this.send(this.service, 'UpdateData', body, { headers: { 'X-Relata-Rules-Version': batch.version } });
                    if (response.ok) {
                        answer = await response.json();
                        break;
                    }
                } catch (error) {
                    // No answer (the network, or a cut-short body): the batch may have been applied; send it again.
                    if (attempt >= this.retries) throw new RelataError('unavailable', `the apply got no answer (${error.message}); it is sent again with the same apply id on the next applyChanges`);
                    await pause(this.retryDelay * 2 ** attempt * (0.5 + Math.random() / 2));
                    continue;
                }
                const error = await this.errorOf(response);
                // Busy: nothing was applied; the same batch goes again after the pause the server asked for.
                if (response.status === 503 && attempt < this.retries) {
                    await pause((error.retryAfter ?? 0) * 1000 || this.retryDelay * 2 ** attempt);
                    continue;
                }
                if (response.status === 503) throw error;
                this.unansweredApply = null;
                if (error.code !== 'staleRules') this.failAll(batch, error);
                throw error;
            }
        } catch (error) {
            // An answer that refused the batch ends it; without an answer its rows stay locked until one comes.
            if (this.unansweredApply !== batch) this.lockRows(batch, false);
            throw error;
        }
        this.unansweredApply = null;
        this.lockRows(batch, false);
        const others = [...new Set([...batch.tables.values(), ...this.tables.values()])];
        for (const sent of batch.deltas) {
            const table = batch.tables.get(sent.tableName.toLowerCase());
            const processed = (answer.deltas ?? []).find((delta) => delta.tableName.toLowerCase() === sent.tableName.toLowerCase());
            if (table && processed) table.accept(processed, others);
        }
        return answer.deltas ?? [];
    }

    /** Marks (or unmarks) the rows of a batch as locked: no edit while its answer is awaited. */
    lockRows(batch, locked) {
        for (const delta of batch.deltas) {
            const table = batch.tables.get(delta.tableName.toLowerCase());
            const ids = new Set(delta.changes.map((change) => change.changeId));
            for (const row of [...(table?.rows ?? []), ...(table?.vanished ?? [])]) if (ids.has(row.changeId)) row.locked = locked;
        }
        return batch;
    }

    /** A refusal of the whole request: every change of the batch fails with the server's words. */
    failAll(batch, error) {
        for (const delta of batch.deltas) {
            const table = batch.tables.get(delta.tableName.toLowerCase());
            table?.accept({ ...delta, changes: delta.changes.map((change) => ({ ...change, status: 'failed', message: error.message, failure: { kind: 'refusal', message: error.message } })) });
        }
    }

    failuresOf(tables) {
        return tables.flatMap((table) => table.rows.filter((row) => row.failure).map((row) => ({ table: table.name, row, failure: row.failure })));
    }

    /** A protocol call answered JSON. */
    async call(service, method, body) {
        const response = await this.send(service, method, body);
        if (!response.ok) throw await this.errorOf(response);
        return response.json();
    }

    async send(service, method, body, { accept = 'application/json', headers = {} } = {}) {
        const allHeaders = { 'Content-Type': 'application/json', Accept: accept, ...headers };
        if (this.token) allHeaders.Authorization = `Bearer ${this.token}`;
        return this.fetchFunction(`${this.baseURL}/v2/${service}/${method}`, { method: 'POST', headers: allHeaders, body: JSON.stringify(body) });
    }

    async errorOf(response) {
        let answer = null;
        try { answer = await response.json(); } catch { /* not JSON: said below */ }
        const retryAfter = Number(response.headers.get('retry-after')) || undefined;
        const error = RelataError.fromAnswer(response.status, answer, retryAfter);
        if (error.code === 'sessionNotFound') {
            this.token = null;
            this.session = null;
            this.isAdmin = false;
        }
        return error;
    }
}

/** A new apply id: a UUID. */
function newApplyId() {
    return globalThis.crypto?.randomUUID ? globalThis.crypto.randomUUID() : `${Date.now()}-${Math.random().toString(36).slice(2)}`;
}

// The verdicts an apply would give, found in the page before anything is sent — as the Swift
// client validates (`LocalDataAdapter.validateApply`): the delta events of each table in update
// order (and of the changes rules make meanwhile), the foreign keys, the update rules and
// `beforeCommit()`; then everything the rules changed is put back. A change that fails here
// would fail on the server, with the same message and place; the server decides anyway.

import { RelataError } from './errors.js';
import { installChangeObjects } from './rule-environment.js';
import { fromTagged, sameValue } from './values.js';

/** The delta and change objects every site gives delta events (`rule-environment.js`). */
const changeObjects = {};
installChangeObjects(changeObjects);

const deltaEvents = ['beforeProcessDelta', 'beforeProcessDeltaChange', 'afterProcessDeltaChange', 'afterProcessDelta'];

/** Every table's rows as they are, to put back once the validation is done. */
function snapshot(tables) {
    return tables.map((table) => ({
        table,
        rows: table.rows.slice(),
        vanished: table.vanished.slice(),
        nextChangeId: table.nextChangeId,
        nextTemporaryKey: table.nextTemporaryKey,
        states: table.rows.concat(table.vanished).map((row) => ({
            row, values: row.values.slice(), originalValues: row.originalValues?.slice() ?? null, state: row.state,
            edits: row.edits.slice(), editing: row.editing?.slice() ?? null, userSet: row.userSet ? new Set(row.userSet) : null,
            changeId: row.changeId, failure: row.failure, view: row.view,
        })),
    }));
}

function restore(saved) {
    for (const entry of saved) {
        entry.table.rows = entry.rows;
        entry.table.vanished = entry.vanished;
        entry.table.nextChangeId = entry.nextChangeId;
        entry.table.nextTemporaryKey = entry.nextTemporaryKey;
        for (const { row, ...state } of entry.states) Object.assign(row, state);
    }
}

/** A failure as a change carries it. */
export function failureOf(error) {
    if (error instanceof RelataError) {
        const kind = error.code === 'refused' || error.code === 'permissionDenied' ? 'refusal'
            : error.code === 'ruleError' ? 'ruleError' : error.code === 'constraintViolation' ? 'constraint' : 'invalidValue';
        const failure = { kind, message: error.message };
        for (const key of ['event', 'table', 'row', 'file', 'line', 'column']) if (error[key] !== undefined && error[key] !== null) failure[key] = error[key];
        return failure;
    }
    return { kind: 'ruleError', message: String(error?.message ?? error) };
}

function fail(change, failure) {
    change.status = 'failed';
    change.message = failure.message;
    change.failure = failure;
}

/**
 * Validates deltas (made by `DataTable.makeDelta`) against the page's tables and rules.
 * @param {object[]} deltas
 * @param {{rules: import('./rules.js').RuleSet, tables: Map<string, import('./table.js').DataTable>, schema: object,
 *          check?: (table: string, change: object) => object|null}} context `check` refuses what the session may not do
 * @returns {object[]} copies of the deltas (and of those of changes rules made), every change resolved or failed
 */
export function validateDeltas(deltas, { rules, tables, schema, check }) {
    const order = (schema.updateOrder ?? []).map((name) => name.toLowerCase());
    const rank = (delta) => {
        const index = order.indexOf(delta.tableName.toLowerCase());
        return index < 0 ? order.length : index;
    };
    const work = deltas.filter((delta) => delta.changes.length > 0)
        .map((delta, position) => ({ delta: structuredClone(delta), position }))
        .sort((a, b) => rank(a.delta) - rank(b.delta) || a.position - b.position).map((entry) => entry.delta);
    const held = [...new Set(tables.values())];
    const saved = snapshot(held);
    const before = new Map(saved.flatMap((entry) => entry.states.map((state) => [state.row, state])));
    const inWork = new Set();
    const tableOf = (name) => tables.get(name.toLowerCase());
    const markInWork = (delta) => {
        const table = tableOf(delta.tableName);
        const ids = new Set(delta.changes.map((change) => change.changeId));
        for (const row of table?.rows ?? []) if (ids.has(row.changeId)) inWork.add(row);
    };
    try {
        work.forEach(markInWork);
        for (let index = 0; index < work.length; index++) {
            processDelta(work[index], rules);
            const made = changesMadeByRules(held, before, inWork);
            made.forEach(markInWork);
            work.push(...made);
        }
        failForeignKeyViolations(work, tables);
        for (const delta of work) {
            for (const change of delta.changes) {
                const refusal = change.status !== 'failed' ? check?.(delta.tableName, change) : null;
                if (refusal) fail(change, refusal);
            }
        }
        let rollback = failureRollingBack(work, schema);
        if (!rollback) {
            try {
                fireTransactionEvent('beforeCommit', work, rules);
            } catch (error) {
                const failure = failureOf(error);
                rollback = { ...failure, message: `beforeCommit failed: ${failure.message}` };
            }
        }
        if (rollback) {
            for (const delta of work) {
                for (const change of delta.changes) {
                    if (change.status !== 'failed') fail(change, { ...rollback, message: `not applied: the apply was rolled back (${rollback.message})` });
                }
            }
        }
        for (const delta of work) for (const change of delta.changes) change.refreshedValues = {};
        return work;
    } finally {
        restore(saved);
    }
}

/** Deltas of the rows rules changed (through lda) that are not in the unit yet. */
function changesMadeByRules(tables, before, inWork) {
    const deltas = [];
    for (const table of tables) {
        const changed = table.rows.concat(table.vanished).filter((row) => {
            if (inWork.has(row) || !['added', 'modified', 'deleted'].includes(row.state)) return false;
            const was = before.get(row);
            return !was || was.state !== row.state || row.values.some((value, index) => !sameValue(value, was.values[index]));
        });
        if (changed.length === 0) continue;
        const full = table.makeDelta();
        const ids = new Set(changed.map((row) => row.changeId));
        const delta = { ...full, changes: (full?.changes ?? []).filter((change) => ids.has(change.changeId)) };
        if (delta.changes.length > 0) deltas.push(delta);
    }
    return deltas;
}

/** The delta events of one delta, in the table's script then the schema's; what they refuse fails. */
function processDelta(delta, rules) {
    const scopes = rules.scopesOf(delta.tableName).filter((scope) => deltaEvents.some((event) => scope.handlers[event]));
    const pending = () => delta.changes.filter((change) => change.status !== 'failed');
    if (scopes.length === 0) {
        for (const change of pending()) change.status = 'resolved';
        return;
    }
    const views = scopes.map(() => deltaView(delta, rules.realm));
    const show = (index) => { for (const view of views) view.show(index); };
    const run = (event, index) => {
        scopes.forEach((scope, position) => {
            const handler = scope.handlers[event];
            if (!handler) return;
            const view = views[position];
            rules.call(() => (index === undefined ? handler(view.object) : handler(view.object, view.changes[index])),
                { event, table: delta.tableName, script: scope.name });
        });
    };
    try { run('beforeProcessDelta'); } catch (error) {
        delta.changes.forEach((change, index) => { if (change.status !== 'failed') { fail(change, failureOf(error)); show(index); } });
    }
    delta.changes.forEach((change, index) => {
        if (change.status === 'failed') return;
        try {
            run('beforeProcessDeltaChange', index);
            change.status = 'resolved';
            show(index);
            run('afterProcessDeltaChange', index);
        } catch (error) {
            fail(change, failureOf(error));
            show(index);
        }
    });
    try { run('afterProcessDelta'); } catch (error) {
        delta.changes.forEach((change, index) => { if (change.status !== 'failed') { fail(change, failureOf(error)); show(index); } });
    }
}

/** The delta as a script sees it, as on every site: `{name, count, changes}` and `delta[i]`; each change with its values and `change.Field`. */
function deltaView(delta, realm) {
    const inRealm = (value) => (value instanceof Date && realm !== globalThis ? new realm.Date(value.getTime()) : value);
    const changes = delta.changes.map((change) => {
        const oldValues = Object.fromEntries(Object.entries(change.oldValues ?? {}).map(([name, value]) => [name, inRealm(fromTagged(value))]));
        const newValues = Object.fromEntries(Object.entries(change.newValues ?? {}).map(([name, value]) => [name, inRealm(fromTagged(value))]));
        const names = [...new Set([...Object.keys(oldValues), ...Object.keys(newValues)])].sort();
        return changeObjects.change(changeObjects.changePrototype(names), change.type, change.changeId, oldValues, newValues,
                                    change.status, change.message ?? null);
    });
    return {
        object: changeObjects.delta(delta.tableName, changes), changes,
        show(index) {
            const change = delta.changes[index];
            Object.assign(changes[index], { status: change.status, message: change.message ?? null });
        },
    };
}

/** Declared foreign keys, checked as the server checks them at commit — with the rows the page holds. */
function failForeignKeyViolations(work, tables) {
    for (;;) {
        const committing = new Map();
        for (const delta of work) {
            const ids = committing.get(delta.tableName.toLowerCase()) ?? new Set();
            for (const change of delta.changes) if (change.status !== 'failed') ids.add(change.changeId);
            committing.set(delta.tableName.toLowerCase(), ids);
        }
        let failedAny = false;
        for (const delta of work) {
            const table = tables.get(delta.tableName.toLowerCase());
            if (!table) continue;
            for (const change of delta.changes) {
                if (change.status === 'failed') continue;
                const message = violation(table, change, tables, committing);
                if (message) {
                    fail(change, { kind: 'constraint', message });
                    failedAny = true;
                }
            }
        }
        if (!failedAny) return;
    }
}

/** The row that will hold `value` in `field` after the commit, or null; of several, the one with the lowest key. */
function holderOf(table, field, value, committing) {
    const index = table.fieldIndex(field);
    const ids = committing.get(table.name.toLowerCase()) ?? new Set();
    const holders = table.rows.filter((row) => {
        if (row.state === 'unchanged') return sameValue(row.values[index], value);
        if (ids.has(row.changeId)) return row.state !== 'deleted' && sameValue(row.values[index], value);
        return row.originalValues !== null && sameValue(row.originalValues[index], value);
    });
    holders.sort((a, b) => {
        for (const key of table.keyIndexes) {
            const x = a.values[key], y = b.values[key];
            if (x !== y) return x < y ? -1 : 1;
        }
        return 0;
    });
    return holders[0] ?? null;
}

function violation(table, change, tables, committing) {
    const row = table.rows.find((candidate) => candidate.changeId === change.changeId);
    if (!row) return null;
    const text = (value) => (value instanceof Date ? value.toISOString() : String(value));
    if (change.type !== 'delete') {
        for (const foreign of table.foreignKeys ?? []) {
            const parent = tables.get(foreign.references.toLowerCase());
            const index = table.fieldIndex(foreign.field);
            const value = row.values[index];
            const changes = change.type === 'insert' || !sameValue(row.originalValues?.[index], value);
            // Only a parent table the page holds whole can say a parent row does not exist.
            if (!parent || !parent.complete || value === null || !changes) continue;
            if (!holderOf(parent, foreign.referencedField, value, committing)) {
                return `${table.name}.${table.fields[index].name} = ${text(value)} refers to no row of ${parent.name} (${parent.fields[parent.fieldIndex(foreign.referencedField)].name})`;
            }
        }
    }
    if (change.type === 'insert') return null;
    for (const child of tables.values()) {
        for (const foreign of child.foreignKeys ?? []) {
            if (foreign.references.toLowerCase() !== table.name.toLowerCase()) continue;
            const keyIndex = table.fieldIndex(foreign.referencedField);
            const key = row.originalValues?.[keyIndex] ?? row.values[keyIndex];
            if (key === null || (change.type === 'update' && sameValue(row.values[keyIndex], key))) continue;
            const holder = holderOf(child, foreign.field, key, committing);
            if (!holder) continue;
            const childField = child.fields[child.fieldIndex(foreign.field)].name;
            return change.type === 'delete'
                ? `${table.name} ${row.label} cannot be deleted: ${child.name} ${holder.label} still refers to it (${child.name}.${childField})`
                : `${table.name} ${row.label} cannot change ${table.fields[keyIndex].name} from ${text(key)}: ${child.name} ${holder.label} still refers to it (${child.name}.${childField})`;
        }
    }
    return null;
}

/** Why the unit rolls back: a failed change in a table whose update rule is rollbackAll. */
function failureRollingBack(work, schema) {
    for (const delta of work) {
        const definition = schema.tables.find((table) => table.name.toLowerCase() === delta.tableName.toLowerCase());
        if (definition?.updateRule?.onFailure !== 'rollbackAll') continue;
        const failed = delta.changes.find((change) => change.status === 'failed');
        if (failed) return { kind: failed.failure?.kind ?? 'refusal', message: `change ${failed.changeId} of ${delta.tableName} failed: ${failed.message ?? ''}` };
    }
    return null;
}

/** A transaction event in the schema-wide script, then in the scripts of the tables in the unit. */
function fireTransactionEvent(event, work, rules) {
    const scopes = [];
    if (rules.schemaScope) scopes.push({ scope: rules.schemaScope, table: null });
    for (const delta of work) {
        const scope = rules.scopes.get(delta.tableName.toLowerCase());
        if (scope && !scopes.some((entry) => entry.scope === scope)) scopes.push({ scope, table: delta.tableName });
    }
    for (const { scope, table } of scopes) {
        const handler = scope.handlers[event];
        if (handler) rules.call(() => handler(), { event, table, script: scope.name });
    }
}

// Edits files (Documentation/Schema.md) in the page: each edit made as a user makes it, through
// the tables' rules, and what became of it — the verdicts `relata run` and `relata apply` print.

import { RelataError, scriptLocation } from './errors.js';
import { base64FromBytes, isBytes, isDate, isoString, valueFromJSON } from './values.js';

const operations = ['insert', 'update', 'delete'];

/** `insert Orders`, `update Products (key 7)`. */
export function editSummary(edit) {
    const operation = operations.find((name) => name in edit);
    const keys = edit.key === undefined ? [] : Array.isArray(edit.key) ? edit.key : [edit.key];
    const text = (value) => (value !== null && typeof value === 'object' && 'ref' in value ? `ref ${value.ref}` : typeof value === 'string' ? `"${value}"` : String(value));
    return `${operation} ${edit[operation]}${keys.length > 0 ? ` (key ${keys.map(text).join(', ')})` : ''}`;
}

/** A failure as a verdict shows it: kind, message, location (`file:line:column`), event. */
function verdictOf(error) {
    if (error instanceof RelataError && (error.code === 'refused' || error.code === 'ruleError')) {
        return { kind: error.code === 'refused' ? 'refusal' : 'ruleError', message: error.message, location: scriptLocation(error), event: error.event };
    }
    if (error instanceof RelataError) {
        const subject = error.table && error.field ? `${error.table}.${error.field}` : error.table ?? error.field;
        const prefix = [subject, error.row, error.location].filter(Boolean).join(', ');
        return { kind: error.code === 'constraintViolation' ? 'constraint' : 'invalidValue', message: prefix ? `${prefix}: ${error.message}` : error.message };
    }
    return { kind: 'storeError', message: String(error?.message ?? error) };
}

/** A value as JSON shows it in a report. */
function jsonValue(value) {
    if (isDate(value)) return isoString(value);
    if (isBytes(value)) return base64FromBytes(value);
    return value === undefined ? null : value;
}

/**
 * Edits made on tables whose rules are attached (a client's), with a verdict each; an edit a
 * row rule or a value refuses is `refused`, the others `pending` until an apply is recorded.
 *
 * @example
 * const run = new EditRun(edits, client.tables);
 * run.record((await client.applyChanges()).deltas);
 * run.report().verdicts;   // [{index: 1, edit: 'insert Orders', row: 'row (OrderId=151)', verdict: 'applied', values: {…}}, …]
 */
export class EditRun {
    /**
     * @param {object[]} edits an edits file's array
     * @param {Map<string, import('./table.js').DataTable>|import('./table.js').DataTable[]} tables
     */
    constructor(edits, tables) {
        this.tables = tables instanceof Map ? [...tables.values()] : tables;
        this.verdicts = [];
        /** The rows the edits made: `{verdict, row, table, changeId}` (no change id for a new row deleted again). */
        this.madeRows = [];
        const aliases = new Map();
        edits.forEach((edit, offset) => {
            const verdict = { index: offset + 1, edit: editSummary(edit), verdict: 'pending' };
            try {
                const { row, table } = this.perform(edit, aliases);
                if (table.rows.includes(row)) {
                    verdict.row = row.label;
                    this.madeRows.push({ verdict: this.verdicts.length, row, table, changeId: row.changeId });
                } else {
                    this.undo(row, offset + 1);
                    this.madeRows.push({ verdict: this.verdicts.length, row, table, changeId: null });
                }
            } catch (error) {
                Object.assign(verdict, { verdict: 'refused' }, verdictOf(error));
            }
            this.verdicts.push(verdict);
        });
    }

    perform(edit, aliases) {
        const operation = operations.find((name) => name in edit);
        const table = this.tables.find((candidate) => candidate.name.toLowerCase() === String(edit[operation]).toLowerCase());
        if (!table) {
            throw new RelataError('unknownTable', `there is no table '${edit[operation]}' (tables: ${this.tables.map((candidate) => candidate.name).join(', ')})`, { table: edit[operation] });
        }
        const values = {};
        for (const [name, value] of Object.entries(edit.values ?? {})) values[name] = this.resolve(value, name, table, aliases);
        if (operation === 'insert') {
            const row = table.addRow(values);
            if (edit.as) aliases.set(edit.as, row);
            return { row, table };
        }
        const row = this.rowOf(edit, table, aliases);
        if (operation === 'update') row.setValues(values);
        else row.remove();
        return { row, table };
    }

    rowOf(edit, table, aliases) {
        const keys = Array.isArray(edit.key) ? edit.key : [edit.key];
        const keyFields = table.keyIndexes.map((index) => table.fields[index]);
        if (keys.length !== keyFields.length) {
            throw new RelataError('invalidSchema', `the key has ${keys.length} values; the primary key of ${table.name} has ${keyFields.length} (${keyFields.map((field) => field.name).join(', ')})`, { table: table.name });
        }
        const values = keys.map((key, position) => this.resolve(key, keyFields[position].name, table, aliases));
        const row = table.rows.find((candidate) => candidate.state !== 'deleted' && table.keyIndexes.every((index, position) => candidate.values[index] === values[position]));
        if (!row) {
            const text = keyFields.map((field, position) => `${field.name}=${values[position]}`).join(', ');
            throw new RelataError('rowNotFound', `no row has the key ${text}`, { table: table.name });
        }
        return row;
    }

    resolve(value, name, table, aliases) {
        if (value !== null && typeof value === 'object' && 'ref' in value) {
            const [alias, field] = String(value.ref).split(/\.(.*)/s);
            const row = aliases.get(alias);
            if (!row) throw new RelataError('invalidSchema', `{"ref": "${value.ref}"} names no row: no earlier insert has "as": "${alias}"`, { table: table.name, field: name });
            if (!row.table.rows.includes(row)) throw new RelataError('rowNotFound', `{"ref": "${value.ref}"} names a row an earlier edit deleted`, { table: table.name, field: name });
            return row.get(field);
        }
        if (!table.indexByName.has(String(name).toLowerCase())) {
            if (table.isVirtual(name)) {
                throw new RelataError('readOnlyField', 'calculated and lookup fields are read-only; their values come from other fields', { table: table.name, field: name });
            }
            throw new RelataError('unknownField', `the table has no such field (fields: ${table.fields.map((field) => field.name).join(', ')})`, { table: table.name, field: name });
        }
        return valueFromJSON(value, table.fields[table.fieldIndex(name)], table.name);
    }

    /** A new row's delete removed it before it was stored: the edits that made and changed it are undone. */
    undo(row, deleting) {
        for (const made of this.madeRows) {
            if (made.row !== row) continue;
            this.verdicts[made.verdict].verdict = 'undone';
            this.verdicts[made.verdict].message = `edit ${deleting} deleted this new row before it was stored`;
        }
        this.madeRows = this.madeRows.filter((made) => made.row !== row);
    }

    /** What an apply (or a validation) made of the edits' changes: a failed change fails its edit, a resolved one gets `passing`. */
    record(deltas, passing = 'applied') {
        const outcomes = new Map();
        for (const delta of deltas) for (const change of delta.changes) outcomes.set(`${delta.tableName.toLowerCase()}/${change.changeId}`, change);
        for (const made of this.madeRows) {
            const verdict = this.verdicts[made.verdict];
            if (made.changeId === null) {
                verdict.verdict = passing;
                continue;
            }
            const change = outcomes.get(`${made.table.name.toLowerCase()}/${made.changeId}`);
            if (!change) continue;
            if (change.status === 'failed') {
                const failure = change.failure ?? {};
                Object.assign(verdict, { verdict: 'failed', kind: failure.kind ?? 'refusal', message: change.message, location: scriptLocation(failure), event: failure.event });
            } else if (change.status === 'resolved') {
                verdict.verdict = passing;
            }
        }
    }

    /** The verdicts, with each row's calculated and lookup values as they are now, and how many of each. */
    report() {
        const verdicts = this.verdicts.map((verdict) => ({ ...verdict }));
        for (const made of this.madeRows) {
            const { row, table } = made;
            if (!table.rows.includes(row) || row.state === 'deleted') continue;
            const verdict = verdicts[made.verdict];
            verdict.row = row.label;
            verdict.values = {};
            for (const field of [...table.lookupFields, ...table.calculatedFields]) {
                try {
                    verdict.values[field.name] = jsonValue(row.get(field.name));
                } catch (error) {
                    verdict.values[field.name] = null;
                    verdict.kind = verdict.kind ?? 'ruleError';
                    verdict.message = [verdict.message, String(error.message)].filter(Boolean).join('\n      ');
                }
            }
        }
        const summary = {};
        for (const verdict of verdicts) summary[verdict.verdict] = (summary[verdict.verdict] ?? 0) + 1;
        for (const verdict of verdicts) for (const key of Object.keys(verdict)) if (verdict[key] === undefined) delete verdict[key];
        return { verdicts, summary };
    }
}

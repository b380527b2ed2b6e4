// Tables whose rows track their own changes: original and posted values, row states, the two-phase
// edit/post/discard, revert, the user's edits (what the server replays), and deltas.

import { RelataError } from './errors.js';
import { base64FromBytes, checkValue, copyValue, fromTagged, isoString, sameValue, toTagged } from './values.js';

/** Where the user's edits stand across every table of a page: the server replays them in this order. */
let lastSequence = 0;
function nextSequence() { return ++lastSequence; }

/** A value as plain text (what a row's label shows). */
function plainText(value) {
    if (value === null || value === undefined) return '';
    if (value instanceof Date) return isoString(value);
    if (value instanceof Uint8Array) return base64FromBytes(value);
    return String(value);
}

/** How deep the rules are running: a change made while they run (through `lda`) is not the user's edit. */
let ruleDepth = 0;

/** Runs rule code: what it changes in tables is the rules' doing, not an edit the server replays. */
export function asRules(body) {
    ruleDepth++;
    try {
        return body();
    } finally {
        ruleDepth--;
    }
}

/**
 * @typedef {{name: string, type: string, primaryKey?: boolean, required?: boolean, size?: number,
 *            readOnly?: boolean, defaultValue?: unknown, logChanges?: boolean}} FieldDefinition
 * @typedef {{sequence: number, kind: 'insert'|'update'|'delete', values: Record<string, unknown>}} RowEdit
 * @typedef {'unchanged'|'modified'|'added'|'addedInEditMode'|'deleted'} RowState
 */

/**
 * One row: its values as posted, its original values, its state, and the user's edits since it
 * was last applied. Field values are read and written by name.
 *
 * @example
 * const row = clients.rows[0];
 * row.set('ClientName', 'Initech');          // posted at once: beforePost and beforeUpdate run
 * row.edit(); row.set('CreditLimit', 5000); row.set('Active', false); row.post();
 * row.state;                                 // 'modified'
 * row.original('ClientName');                // the value as fetched
 * row.revert();                              // back to the original values
 */
export class DataRow {
    /** @param {DataTable} table @param {unknown[]|null} original @param {unknown[]} values */
    constructor(table, original, values) {
        this.table = table;
        /** The values as fetched (null for an added row). */
        this.originalValues = original;
        /** The posted values. */
        this.values = values;
        /** While in edit mode: the values being edited, and the fields the user set. */
        this.editing = null;
        this.userSet = null;
        /** @type {RowState} */
        this.state = original ? 'unchanged' : 'added';
        /** @type {RowEdit[]} */
        this.edits = [];
        /** Why the last apply failed this row's change (the row keeps what the user typed). */
        this.failure = null;
        this.changeId = 0;
        /** Whether the row's change was sent and its answer has not come. */
        this.locked = false;
        /** Exact decimal texts of the original values, sent back unchanged. */
        this.exact = null;
    }

    /** Whether the row is in edit mode (`edit()` called, not yet posted or discarded). */
    get isEditing() { return this.editing !== null; }

    /** The value of a field: the one being edited in edit mode, else the posted one; calculated and lookup fields too. */
    get(field) {
        const index = this.table.fieldIndex(field, { virtual: true });
        if (index < 0) return this.table.virtualValue(this, field);
        return copyValue((this.editing ?? this.values)[index]);
    }

    /** The original value of a field (the posted one for an added row). */
    original(field) {
        const index = this.table.fieldIndex(field);
        return copyValue((this.originalValues ?? this.values)[index]);
    }

    /**
     * Writes a field. In edit mode the value waits for `post()`; otherwise it is posted at once,
     * running the row rules, and a refusal leaves the row exactly as it was.
     */
    set(field, value) {
        const index = this.table.fieldIndex(field);
        const definition = this.table.fields[index];
        if (this.state === 'deleted') {
            throw new RelataError('invalidRowState', 'the row is deleted; cancel the deletion before changing it', { table: this.table.name, field: definition.name, row: this.label });
        }
        this.checkUnlocked();
        if (definition.type === 'autoInc' || definition.type === 'largeAutoInc') {
            throw new RelataError('readOnlyField', 'the field is auto-increment; the data source assigns its value', { table: this.table.name, field: definition.name, row: this.label });
        }
        if (definition.readOnly) {
            throw new RelataError('readOnlyField', 'the field is read-only', { table: this.table.name, field: definition.name, row: this.label });
        }
        const checked = this.checked(value, definition);
        if (this.editing) {
            this.editing[index] = checked;
            this.userSet.add(index);
            return;
        }
        // A direct write of the value the row has changes nothing: no edit, no rules.
        if (sameValue(this.values[index], checked)) return;
        this.edit();
        this.editing[index] = checked;
        this.userSet.add(index);
        try {
            this.post();
        } catch (error) {
            this.discard();
            throw error;
        }
    }

    /**
     * A rule's write: checked like any other, made where the row's values are now (the edit in
     * edit mode), and never one of the user's edits.
     */
    setFromRule(field, value) {
        const index = this.table.fieldIndex(field);
        const definition = this.table.fields[index];
        if (definition.readOnly) {
            throw new RelataError('readOnlyField', 'the field is read-only', { table: this.table.name, field: definition.name, row: this.label });
        }
        (this.editing ?? this.values)[index] = this.checked(value, definition);
    }

    /** A value checked for a field of this row: an error names the table, field and row. */
    checked(value, definition) {
        try {
            return checkValue(value, definition, this.table.name);
        } catch (error) {
            if (error instanceof RelataError && !error.row) error.row = this.label;
            throw error;
        }
    }

    /** Writes several fields under one check (edit, set each, post). */
    setValues(values) {
        const entries = Object.entries(values).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
        if (entries.length === 1 || this.isEditing) {
            for (const [field, value] of entries) this.set(field, value);
            return;
        }
        this.edit();
        try {
            for (const [field, value] of entries) this.set(field, value);
            this.post();
        } catch (error) {
            this.discard();
            throw error;
        }
    }

    /** Enters edit mode: writes wait for `post()` or `discard()`. */
    edit() {
        if (this.state === 'deleted') throw new RelataError('invalidRowState', 'the row is deleted; cancel the deletion before changing it', { table: this.table.name, row: this.label });
        if (this.editing) return;
        this.checkUnlocked();
        this.editing = this.values.slice();
        this.userSet = new Set();
    }

    /**
     * Posts the edit: `beforePost`, then `beforeInsert` or `beforeUpdate(row, old)`. A refusal
     * throws and leaves the row in edit mode with what the user typed.
     */
    post() {
        if (!this.editing) return;
        this.table.post(this, { checkingRequired: true });
    }

    /** Leaves edit mode without posting; an added row never posted leaves the table. */
    discard() {
        if (!this.editing) return;
        this.editing = null;
        this.userSet = null;
        if (this.state === 'addedInEditMode') this.table.detach(this);
    }

    /** Removes the row: `beforeDelete` runs first, and a refusal keeps it. */
    remove() { this.table.removeRow(this); }

    /** Cancels every change since the row was fetched or last applied; an added row leaves the table. */
    revert() { this.table.revertRow(this); }

    /** A row whose change was sent and not yet answered cannot change. */
    checkUnlocked() {
        if (this.locked) {
            throw new RelataError('rowLocked', 'the row is locked while its changes are being applied; wait for the apply to finish (if its answer never came, apply again: the batch is sent again first)', { table: this.table.name, row: this.label });
        }
    }

    /** How messages name the row: its primary key, or its place. */
    get label() {
        const table = this.table;
        if (table.keyIndexes.length === 0) return `row #${table.rows.indexOf(this) + 1}`;
        // A row being edited (a new row before its first post, above all) is named by the key it is getting.
        const values = this.editing ?? this.values;
        return `row (${table.keyIndexes.map((index) => `${table.fields[index].name}=${plainText(values[index])}`).join(', ')})`;
    }
}

/**
 * A table of rows fetched from a data server (or made by hand), with change tracking.
 *
 * @example
 * const [orders] = await client.fetchTables([{ table: 'Orders', where: 'ClientId = :c', parameters: { c: { integer: 7 } } }]);
 * const row = orders.addRow({ ClientId: 7, OrderDate: new Date() });   // onNewRow, then beforePost and beforeInsert
 * orders.pendingRows;    // [row]
 */
export class DataTable {
    /**
     * @param {string} name
     * @param {FieldDefinition[]} fields
     * @param {{lookupFields?: object[], calculatedFields?: object[], readOnly?: boolean}} [definition]
     */
    constructor(name, fields, definition = {}) {
        this.name = name;
        this.fields = fields;
        this.lookupFields = definition.lookupFields ?? [];
        this.calculatedFields = definition.calculatedFields ?? [];
        this.readOnly = definition.readOnly ?? false;
        /** @type {DataRow[]} */
        this.rows = [];
        this.keyIndexes = fields.map((field, index) => (field.primaryKey ? index : -1)).filter((index) => index >= 0);
        this.indexByName = new Map(fields.map((field, index) => [field.name.toLowerCase(), index]));
        /** Changes of rows added and removed again, which the server replays too. */
        this.vanished = [];
        this.nextChangeId = 1;
        this.nextTemporaryKey = -1;
        /** The rules that run as rows change (set by the client from the schema's scripts). */
        this.rules = null;
        /** Called after every change of a row: `(table, row, what)`. */
        this.observers = new Set();
    }

    /** A field's index by name (case-insensitively), or an error naming the table and field. */
    fieldIndex(name, { virtual = false } = {}) {
        const index = this.indexByName.get(String(name).toLowerCase());
        if (index !== undefined) return index;
        if (virtual && this.isVirtual(name)) return -1;
        throw new RelataError('unknownField', `the table has no field '${name}'`, { table: this.name, field: String(name) });
    }

    isVirtual(name) {
        const lower = String(name).toLowerCase();
        return this.lookupFields.some((field) => field.name.toLowerCase() === lower) || this.calculatedFields.some((field) => field.name.toLowerCase() === lower);
    }

    /** A calculated or lookup field's value (rules compute calculated ones; see rules.js). */
    virtualValue(row, name) {
        const lower = String(name).toLowerCase();
        const lookup = this.lookupFields.find((field) => field.name.toLowerCase() === lower);
        if (lookup) {
            const source = this.lookupTables?.get(lookup.lookupTable.toLowerCase());
            const key = row.get(lookup.sourceField);
            if (!source || key === null) return null;
            const match = source.rows.find((candidate) => candidate.state !== 'deleted' && sameValue(candidate.get(lookup.lookupKeyField), key));
            return match ? match.get(lookup.lookupResultField) : null;
        }
        const calculated = this.calculatedFields.find((field) => field.name.toLowerCase() === lower);
        if (calculated && this.rules) return this.rules.calculate(this, row, calculated);
        return null;
    }

    /** Rows fetched: each becomes an unchanged row. */
    load(rows) {
        for (const values of rows) {
            if (values.length !== this.fields.length) {
                throw new RelataError('invalidResponse', `a row has ${values.length} values for ${this.fields.length} fields`, { table: this.name });
            }
            this.rows.push(new DataRow(this, values, values.slice()));
        }
        this.notify(null, 'loaded');
    }

    /** The rows with changes to send (not those in edit mode). */
    get pendingRows() {
        return this.rows.filter((row) => row.state === 'added' || row.state === 'modified' || row.state === 'deleted');
    }

    /** Whether any change waits to be applied. */
    get hasChanges() { return this.pendingRows.length > 0 || this.vanished.length > 0; }

    /**
     * Adds a row: `onNewRow` sets defaults, the given values are written over them, and the row is
     * posted at once (`beforePost`, `beforeInsert`) — or, with `inEditMode`, when its `post()` is called.
     * A refusal cancels the addition and throws.
     * @param {Record<string, unknown>} [values]
     * @param {{inEditMode?: boolean}} [options]
     */
    addRow(values = {}, { inEditMode = false } = {}) {
        this.checkWritable();
        const initial = this.fields.map((field) => this.defaultValue(field));
        const row = new DataRow(this, null, initial);
        for (const index of this.keyIndexes) {
            if (this.fields[index].type === 'autoInc' || this.fields[index].type === 'largeAutoInc') initial[index] = this.nextTemporaryKey--;
        }
        row.state = 'addedInEditMode';
        row.edit();
        this.rules?.run('onNewRow', this, row);
        row.userSet = new Set();
        for (const [field, value] of Object.entries(values)) row.set(field, value);
        this.rows.push(row);
        if (!inEditMode) {
            try {
                this.post(row, { checkingRequired: false });
            } catch (error) {
                row.discard();
                throw error;
            }
        }
        return row;
    }

    /** A field's default (the schema tags it: `{"string": "open"}`). */
    defaultValue(field) {
        const value = field.defaultValue;
        if (value === undefined || value === null) return null;
        return checkValue(typeof value === 'object' && !(value instanceof Date) ? fromTagged(value) : value, field, this.name);
    }

    /**
     * Posts a row's edit through the rules, then checks what the table guarantees — a new row's
     * required fields (when it is posted explicitly; a row added directly is checked when the delta
     * is made) and a unique primary key — and records the user's edit.
     */
    post(row, { checkingRequired = true } = {}) {
        const isNew = row.state === 'addedInEditMode' || row.state === 'added';
        const typed = row.editing.slice();
        // Rules see the new values (the row reads its edit) and what they write joins the same post;
        // lda finds the row by its values before the change, as a database's BEFORE trigger does.
        try {
            this.rules?.run('beforePost', this, row);
            if (isNew) this.rules?.run('beforeInsert', this, row);
            else this.rules?.run('beforeUpdate', this, row, this.oldValues(row, row.values));
            if (row.state === 'addedInEditMode' && checkingRequired) {
                const missing = this.fields.findIndex((field, index) => field.required && field.type !== 'autoInc' && field.type !== 'largeAutoInc' && row.editing[index] === null);
                if (missing >= 0) {
                    throw new RelataError('requiredValueMissing', 'the field is required; set it before posting the new row', { table: this.name, field: this.fields[missing].name, row: row.label });
                }
            }
            this.checkPrimaryKey(row);
        } catch (error) {
            // The row stays as it was, in edit mode with what the user typed (not what the rules wrote).
            row.editing = typed;
            throw error;
        }
        row.values = row.editing;
        const userValues = {};
        for (const index of row.userSet) userValues[this.fields[index].name] = copyValue(row.editing[index]);
        row.editing = null;
        row.userSet = null;
        const kind = row.state === 'addedInEditMode' ? 'insert' : 'update';
        if (row.state === 'addedInEditMode') row.state = 'added';
        if (ruleDepth === 0 && (kind === 'insert' || Object.keys(userValues).length > 0)) row.edits.push({ sequence: nextSequence(), kind, values: userValues });
        if (row.changeId === 0) row.changeId = this.nextChangeId++;
        if (row.state === 'unchanged' || row.state === 'modified') {
            row.state = this.fields.some((_, index) => !sameValue(row.values[index], row.originalValues[index])) ? 'modified' : 'unchanged';
        }
        row.failure = null;
        this.notify(row, 'posted');
    }

    /** A posted key must be whole and used by no other row. */
    checkPrimaryKey(row) {
        if (this.keyIndexes.length === 0) return;
        const key = this.keyIndexes.map((index) => row.editing[index]);
        if (row.state !== 'addedInEditMode' && this.keyIndexes.every((index, position) => sameValue(row.values[index], key[position]))) return;
        const missing = this.keyIndexes.find((index) => row.editing[index] === null);
        if (missing !== undefined) {
            throw new RelataError('constraintViolation', 'the field is part of the primary key and cannot be NULL', { table: this.name, field: this.fields[missing].name, row: row.label });
        }
        const holder = this.rows.find((other) => other !== row && other.state !== 'addedInEditMode' && other.state !== 'deleted'
            && this.keyIndexes.every((index, position) => sameValue(other.values[index], key[position])));
        if (holder) {
            const text = this.keyIndexes.map((index, position) => `${this.fields[index].name}=${plainText(key[position])}`).join(', ');
            throw new RelataError('constraintViolation', `the primary key (${text}) is already used by ${holder.label}`, { table: this.name, row: row.label });
        }
    }

    /** The original values as `old` shows them to `beforeUpdate`. */
    oldValues(row, posted) {
        const old = {};
        this.fields.forEach((field, index) => { old[field.name] = copyValue((row.originalValues ?? posted)[index]); });
        return old;
    }

    removeRow(row) {
        this.checkWritable();
        if (row.table !== this || !this.rows.includes(row)) throw new RelataError('rowNotFound', 'the row is not in the table', { table: this.name });
        if (row.isEditing) throw new RelataError('invalidRowState', 'the row is in edit mode; post or discard the edit first', { table: this.name, row: row.label });
        if (row.state === 'deleted') throw new RelataError('invalidRowState', 'the row is already deleted', { table: this.name, row: row.label });
        row.checkUnlocked();
        this.rules?.run('beforeDelete', this, row);
        if (row.changeId === 0) row.changeId = this.nextChangeId++;
        if (ruleDepth === 0) row.edits.push({ sequence: nextSequence(), kind: 'delete', values: {} });
        if (row.state === 'added') {
            this.detach(row);
            // The user's removal of a row the server makes too (by replaying the edits) goes there as well.
            if (ruleDepth === 0) this.vanished.push(row);
        } else {
            row.state = 'deleted';
        }
        this.notify(row, 'removed');
    }

    revertRow(row) {
        if (row.state === 'added' || row.state === 'addedInEditMode') {
            this.detach(row);
            return;
        }
        row.editing = null;
        row.userSet = null;
        row.values = row.originalValues.slice();
        row.state = 'unchanged';
        row.edits = [];
        row.failure = null;
        this.notify(row, 'reverted');
    }

    detach(row) {
        const index = this.rows.indexOf(row);
        if (index >= 0) this.rows.splice(index, 1);
        this.notify(row, 'detached');
    }

    checkWritable() {
        if (this.readOnly) throw new RelataError('readOnlyField', 'the table is the answer of a query and cannot be changed', { table: this.name });
    }

    notify(row, what) {
        for (const observer of this.observers) observer(this, row, what);
    }

    /**
     * The table's pending changes as the protocol's delta, each with the user's edits; null when none.
     * A required field left empty is refused here, naming the row and field.
     */
    makeDelta() {
        const changes = [];
        for (const row of this.pendingRows) {
            const type = row.state === 'added' ? 'insert' : row.state === 'deleted' ? 'delete' : 'update';
            if (type !== 'delete') {
                const missing = this.fields.findIndex((field, index) => field.required && field.type !== 'autoInc' && field.type !== 'largeAutoInc' && row.values[index] === null);
                if (missing >= 0) {
                    throw new RelataError('requiredValueMissing', 'the field is required; set it before applying the changes', { table: this.name, field: this.fields[missing].name, row: row.label });
                }
            }
            const change = { changeId: row.changeId, type, status: 'pending', oldValues: {}, newValues: {}, refreshedValues: {} };
            this.fields.forEach((field, index) => {
                if (type !== 'insert') change.oldValues[field.name] = this.wireValue(row.originalValues[index], field, row, index);
                if (type !== 'delete') change.newValues[field.name] = toTagged(row.values[index], field);
            });
            change.edits = row.edits.map((edit) => this.wireEdit(edit));
            changes.push(change);
        }
        for (const row of this.vanished) {
            const newValues = {};
            this.fields.forEach((field, index) => { newValues[field.name] = toTagged(row.values[index], field); });
            changes.push({ changeId: row.changeId, type: 'insert', status: 'pending', oldValues: {}, newValues, refreshedValues: {}, edits: row.edits.map((edit) => this.wireEdit(edit)) });
        }
        if (changes.length === 0) return null;
        changes.sort((a, b) => a.changeId - b.changeId);
        return {
            tableName: this.name,
            keyFields: this.keyIndexes.map((index) => this.fields[index].name),
            loggedFields: this.fields.filter((field) => field.logChanges !== false || field.primaryKey).map((field) => field.name),
            changes,
        };
    }

    wireEdit(edit) {
        const values = {};
        for (const [name, value] of Object.entries(edit.values)) values[name] = toTagged(value, this.fields[this.fieldIndex(name)]);
        return { sequence: edit.sequence, kind: edit.kind, values };
    }

    /** An original value as sent back: a decimal as the exact text it came as. */
    wireValue(value, field, row, index) {
        const exact = row.exact?.[index];
        if (exact !== undefined && typeof value === 'number' && Number(exact) === value) return { decimal: exact };
        return toTagged(value, field);
    }

    /**
     * Folds a processed delta back: resolved changes become the rows' originals (with the values
     * the server stored, a new row's real key among them — also in rows of `dependents` that refer
     * to it); failed ones stay pending with their failure, keeping what the user typed.
     * @param {object} delta the server's answer for this table
     * @param {DataTable[]} [others] the other tables, whose foreign keys to a new row's key are fixed up
     */
    accept(delta, others = []) {
        const byChange = new Map(delta.changes.map((change) => [change.changeId, change]));
        const replaced = [];
        for (const row of [...this.rows]) {
            const change = byChange.get(row.changeId);
            if (!change || row.changeId === 0) continue;
            if (change.status === 'failed') {
                row.failure = { message: change.message ?? 'the data server refused the change', ...(change.failure ?? {}) };
                continue;
            }
            if (change.status !== 'resolved') continue;
            if (row.state === 'deleted') {
                this.detach(row);
                continue;
            }
            for (const [name, tagged] of Object.entries(change.refreshedValues ?? {})) {
                const index = this.fieldIndex(name);
                const value = checkValue(fromTagged(tagged), this.fields[index], this.name);
                if (this.fields[index].primaryKey && !sameValue(row.values[index], value)) replaced.push({ field: this.fields[index].name, old: row.values[index], new: value });
                row.values[index] = value;
            }
            row.originalValues = row.values.slice();
            row.exact = null;
            row.state = 'unchanged';
            row.edits = [];
            row.failure = null;
            row.changeId = 0;
        }
        this.vanished = this.vanished.filter((row) => {
            const change = byChange.get(row.changeId);
            return !(change && change.status !== 'pending');
        });
        for (const replacement of replaced) {
            for (const other of [this, ...others]) other.replaceForeignKeys(this.name, replacement);
        }
        this.notify(null, 'accepted');
    }

    /** Rows whose foreign key refers to a replaced temporary key get the real one. */
    replaceForeignKeys(table, { field, old, new: value }) {
        for (const foreign of this.foreignKeys ?? []) {
            if (foreign.references.toLowerCase() !== table.toLowerCase() || foreign.referencedField.toLowerCase() !== field.toLowerCase()) continue;
            const index = this.fieldIndex(foreign.field);
            for (const row of this.rows) {
                if (sameValue(row.values[index], old)) row.values[index] = value;
                if (row.originalValues && sameValue(row.originalValues[index], old)) row.originalValues[index] = value;
                for (const edit of row.edits) if (sameValue(edit.values[foreign.field], old)) edit.values[foreign.field] = value;
            }
        }
    }
}

// The web console: log in, browse the tables the user may read, edit rows with the schema's rules
// running in the page, apply and see each change's verdict, and run DA SQL; for a user with one of
// the server's admin roles, the server's health, sessions and recent refusals. It uses nothing but
// the JavaScript client the server serves beside it.

import { RelataClient, RelataError, scriptLocation, storageOf } from '/client/relata.js';

const client = new RelataClient();
const $ = (id) => document.getElementById(id);
const view = { table: null, page: 0, pageSize: 25, where: '', shownWhere: new Map() };
const cellMessages = new Map();   // row → {field, text}: a refusal shown next to the field
let schemaPoll = null;

/** ` (file:line:column)` when a script location is known, or nothing. */
function placeOf(failure) {
    const location = scriptLocation(failure);
    return location ? ` (${location})` : '';
}

/** A refusal or error as one line: what said no, the message, and where in the scripts. */
function explain(error) {
    if (!(error instanceof RelataError)) return String(error?.message ?? error);
    const place = placeOf(error);
    const by = error.code === 'refused' ? `refused by ${error.event}: ` : error.code === 'ruleError' ? `a rule is broken (${error.event}): ` : '';
    return `${by}${error.message}${place}`;
}

function element(tag, properties = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(properties)) {
        if (key === 'dataset') Object.assign(node.dataset, value);
        else if (key.startsWith('aria') || key === 'role' || key === 'for') node.setAttribute(key.replace(/^aria([A-Z])/, (_, c) => `aria-${c.toLowerCase()}`), value);
        else node[key] = value;
    }
    node.append(...children.filter((child) => child !== null && child !== undefined));
    return node;
}

function showNotice(text) {
    $('notice').textContent = text;
    $('notice').hidden = false;
}

// MARK: Logging in

$('login-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const form = new FormData(event.target);
    $('login-error').textContent = '';
    try {
        await client.login({ user: form.get('user'), password: form.get('password'), domain: form.get('domain') || undefined });
        await client.getSchema();
        $('notice').hidden = true;
        showWorkspace();
    } catch (error) {
        $('login-error').textContent = explain(error);
    }
});

$('logout').addEventListener('click', async () => {
    clearInterval(schemaPoll);
    try { await client.logout(); } catch { /* the session is gone either way */ }
    location.reload();
});

client.onRulesChanged = (version) => {
    showNotice(`The server's rules changed (version ${version.slice(0, 19)}): the page now runs the new rules.`);
    showVersion();
    if (view.table) render();
};

function showVersion() {
    $('rules-version').textContent = `rules ${client.schemaAnswer.version.slice(0, 19)}`;
}

function showWorkspace() {
    $('login').hidden = true;
    $('workspace').hidden = false;
    $('logout').hidden = false;
    $('who').textContent = `${client.session.values.User ?? ''} (${client.session.roles.join(', ') || 'no roles'})`;
    showVersion();
    const list = $('tables');
    list.replaceChildren();
    const allowed = client.schemaAnswer.allowed;
    for (const table of client.schemaAnswer.schema.tables) {
        if (allowed && !(allowed[table.name] ?? []).includes('read')) continue;
        list.append(element('li', {}, element('button', { type: 'button', textContent: table.name, onclick: () => openTable(table.name) })));
    }
    $('admin-nav-title').hidden = !client.isAdmin;
    $('admin-nav').hidden = !client.isAdmin;
    // The rules may change while the page is open: ask for the version now and then.
    schemaPoll = setInterval(() => client.getSchema().catch((error) => {
        if (error.code !== 'sessionNotFound') return;
        clearInterval(schemaPoll);
        showNotice('Your session has ended (logged out elsewhere, or expired): log in again. Changes not applied are kept until you reload.');
        $('login').hidden = false;
    }), 10_000);
}

// MARK: Browsing and editing

async function openTable(name, where = '') {
    $('admin').hidden = true;
    $('server-view').setAttribute('aria-current', 'false');
    $('table-error').textContent = '';
    $('verdicts').replaceChildren();
    view.where = where;
    view.page = 0;
    for (const button of $('tables').querySelectorAll('button')) button.setAttribute('aria-current', String(button.textContent === name));
    try {
        // A table with changes not yet applied is kept as it is (its changes would be lost); the filter reloads it.
        const held = client.tables.get(name.toLowerCase());
        view.table = held && held.hasChanges && where === view.shownWhere.get(name) ? held
            : await client.fetchTable(name, { where: where || null, maxRecords: 10_000 });
        view.shownWhere.set(name, where);
    } catch (error) {
        $('table-error').textContent = explain(error);
        return;
    }
    $('browser').hidden = false;
    $('table-title').textContent = name;
    $('filter').elements.where.value = where;
    cellMessages.clear();
    render();
}

$('filter').addEventListener('submit', (event) => {
    event.preventDefault();
    if (view.table) openTable(view.table.name, event.target.elements.where.value.trim());
});

$('previous').addEventListener('click', () => { view.page = Math.max(0, view.page - 1); render(); });
$('next').addEventListener('click', () => { view.page += 1; render(); });

function display(value) {
    if (value === null || value === undefined) return '';
    if (value instanceof Date) return value.toISOString();
    if (value instanceof Uint8Array) return `(${value.length} bytes)`;
    return String(value);
}

/** What the user typed, as the value to write: empty is NULL, the rest is checked by the row. */
function typed(input, field) {
    if (storageOf(field.type) === 'boolean') return input.checked;
    return input.value === '' ? null : input.value;
}

function render() {
    const table = view.table;
    const virtual = [...table.lookupFields, ...table.calculatedFields];
    const head = element('tr', {}, element('th', { textContent: 'State' }),
        ...table.fields.map((field) => element('th', { textContent: field.name, title: field.type })),
        ...virtual.map((field) => element('th', { textContent: field.name, title: 'calculated or looked up' })),
        element('th', { textContent: 'Actions' }));
    $('grid').tHead.replaceChildren(head);
    const pages = Math.max(1, Math.ceil(table.rows.length / view.pageSize));
    view.page = Math.min(view.page, pages - 1);
    const shown = table.rows.slice(view.page * view.pageSize, (view.page + 1) * view.pageSize);
    $('grid').tBodies[0].replaceChildren(...shown.map((row) => rowElement(table, row, virtual)));
    $('page').textContent = `page ${view.page + 1} of ${pages}`;
    $('grid-status').textContent = `${table.rows.length} rows${table.hasChanges ? `, ${table.pendingRows.length} changed` : ''}`;
    $('previous').disabled = view.page === 0;
    $('next').disabled = view.page >= pages - 1;
}

function rowElement(table, row, virtual) {
    const message = cellMessages.get(row);
    const cells = table.fields.map((field) => {
        const isBoolean = storageOf(field.type) === 'boolean';
        const value = row.get(field.name);
        const input = element('input', {
            type: isBoolean ? 'checkbox' : 'text', ariaLabel: `${field.name} of ${row.label}`,
            disabled: row.state === 'deleted' || field.readOnly || row.locked || value instanceof Uint8Array,
        });
        if (isBoolean) input.checked = value === true;
        else input.value = message?.field === field.name ? message.typed : display(value);
        if (message?.field === field.name) input.setAttribute('aria-invalid', 'true');
        input.addEventListener('change', () => edit(row, field, input));
        const note = message?.field === field.name ? element('span', { className: 'message', role: 'alert', textContent: message.text }) : null;
        return element('td', {}, input, note);
    });
    const virtualCells = virtual.map((field) => {
        let text;
        try { text = display(row.get(field.name)); } catch (error) { text = explain(error); }
        return element('td', { className: 'state', textContent: text });
    });
    const actions = [];
    if (row.state === 'addedInEditMode' || row.isEditing) {
        actions.push(element('button', { type: 'button', textContent: 'Post', onclick: () => post(row) }));
        actions.push(element('button', { type: 'button', textContent: 'Discard', onclick: () => { row.discard(); cellMessages.delete(row); render(); } }));
    } else if (row.state !== 'deleted') {
        actions.push(element('button', { type: 'button', textContent: 'Delete', onclick: () => remove(row) }));
    }
    if (row.state === 'modified' || row.state === 'deleted') {
        actions.push(element('button', { type: 'button', textContent: 'Revert', onclick: () => { row.revert(); cellMessages.delete(row); render(); } }));
    }
    const rowNote = message && !message.field ? element('span', { className: 'message', role: 'alert', textContent: message.text }) : null;
    const failure = row.failure ? element('span', { className: 'message', role: 'alert', textContent: explainFailure(row.failure) }) : null;
    return element('tr', { className: row.state },
        element('td', { className: 'state', textContent: row.isEditing ? `${row.state} (editing)` : row.state }, rowNote, failure),
        ...cells, ...virtualCells, element('td', {}, ...actions));
}

function explainFailure(failure) {
    return `${failure.kind === 'refusal' && failure.event ? `refused by ${failure.event}: ` : ''}${failure.message}${placeOf(failure)}`;
}

/** A cell's change: written to the row (posted at once unless the row is being edited). */
function edit(row, field, input) {
    try {
        row.set(field.name, typed(input, field));
        cellMessages.delete(row);
    } catch (error) {
        // The row is as it was; the cell keeps what the user typed, with why it was refused.
        cellMessages.set(row, { field: field.name, typed: input.value, text: explain(error) });
    }
    render();
    focusCell(row, field);
}

function focusCell(row, field) {
    const label = `${field.name} of ${row.label}`;
    for (const input of $('grid').querySelectorAll('input')) if (input.getAttribute('aria-label') === label) input.focus();
}

function post(row) {
    try {
        row.post();
        cellMessages.delete(row);
    } catch (error) {
        cellMessages.set(row, { field: error.field, typed: error.field ? display(row.get(error.field)) : '', text: explain(error) });
    }
    render();
}

function remove(row) {
    try {
        row.remove();
        cellMessages.delete(row);
    } catch (error) {
        cellMessages.set(row, { text: explain(error) });
    }
    render();
}

$('add-row').addEventListener('click', () => {
    try {
        const row = view.table.addRow({}, { inEditMode: true });
        view.page = Math.floor((view.table.rows.indexOf(row)) / view.pageSize);
    } catch (error) {
        $('table-error').textContent = explain(error);
    }
    render();
});

$('revert').addEventListener('click', () => {
    for (const row of [...view.table.rows]) if (row.state !== 'unchanged') row.revert();
    view.table.vanished = [];
    cellMessages.clear();
    render();
});

$('apply').addEventListener('click', async () => {
    $('table-error').textContent = '';
    const verdicts = $('verdicts');
    verdicts.replaceChildren();
    try {
        // Every table's changes go together: an order and its lines are one apply.
        const { deltas } = await client.applyChanges();
        if (deltas.length === 0) verdicts.append(element('li', { textContent: 'Nothing to apply.' }));
        for (const delta of deltas) {
            for (const change of delta.changes) {
                const failed = change.status === 'failed';
                const text = `${delta.tableName} ${change.type} (change ${change.changeId}): ${failed ? explainFailure(change.failure ?? { message: change.message }) : change.status}`;
                verdicts.append(element('li', { className: failed ? 'failed' : 'resolved', textContent: text }));
            }
        }
    } catch (error) {
        $('table-error').textContent = explain(error);
    }
    render();
});

// MARK: DA SQL

$('sql-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    $('sql-error').textContent = '';
    const result = $('sql-result');
    try {
        const table = await client.query(event.target.elements.sql.value, { maxRecords: 1000 });
        result.tHead.replaceChildren(element('tr', {}, ...table.fields.map((field) => element('th', { textContent: field.name }))));
        result.tBodies[0].replaceChildren(...table.rows.map((row) => element('tr', {},
            ...table.fields.map((field) => element('td', { className: 'state', textContent: display(row.get(field.name)) })))));
    } catch (error) {
        result.tHead.replaceChildren();
        result.tBodies[0].replaceChildren();
        $('sql-error').textContent = `${explain(error)}${error.location ? ` at ${error.location}` : ''}`;
    }
});

// MARK: The server (admin roles only)

/** A moment as the reader's local date and time. */
function when(text) {
    const date = new Date(text);
    return Number.isNaN(date.getTime()) ? String(text) : date.toLocaleString();
}

function cells(...texts) {
    return element('tr', {}, ...texts.map((text) => element('td', { className: 'state', textContent: text ?? '' })));
}

async function showServer() {
    $('browser').hidden = true;
    $('admin').hidden = false;
    for (const button of $('tables').querySelectorAll('button')) button.setAttribute('aria-current', 'false');
    $('server-view').setAttribute('aria-current', 'true');
    $('admin-error').textContent = '';
    $('admin-status').textContent = 'Loading…';
    let overview;
    try {
        overview = await client.serverOverview();
    } catch (error) {
        $('admin-status').textContent = '';
        $('admin-error').textContent = explain(error);
        return;
    }
    const { server, health, sessions, refusals } = overview;
    $('admin-status').textContent = `${health.status === 'ready' ? 'Ready' : 'Not ready'} · protocol ${server.protocol} · up ${server.uptimeSeconds} s `
        + `since ${when(server.started)} · domain ${overview.domain}`;
    $('admin-health').tBodies[0].replaceChildren(...health.checks.map((check) =>
        cells(check.name, check.ready ? 'yes' : 'no', check.rulesVersion, check.problem)));
    $('admin-sessions').tBodies[0].replaceChildren(...sessions.map((session) =>
        cells(session.user, session.roles.join(', '), when(session.started), when(session.expires), when(session.ends))));
    $('admin-refusals').tBodies[0].replaceChildren(...(refusals.length === 0
        ? [element('tr', {}, element('td', { className: 'state', colSpan: 7, textContent: 'No refusals since the server started.' }))]
        : refusals.map((refusal) => cells(when(refusal.at), refusal.user, refusal.event ? `${refusal.kind} (${refusal.event})` : refusal.kind,
            refusal.table, refusal.row, refusal.message, scriptLocation(refusal)))));
}

$('server-view').addEventListener('click', showServer);
$('admin-refresh').addEventListener('click', showServer);

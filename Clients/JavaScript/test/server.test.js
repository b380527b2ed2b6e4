// The client against a real `relata serve` of PCTrade over a socket: login, reads in both wire
// formats, the page's rules, applies with real keys, a retry after a lost answer, stale rules.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { RelataClient, RelataError } from '../relata.js';
import { startServer } from './support/server.js';

let server;
before(async () => { server = await startServer(); }, { timeout: 90_000 });
after(async () => { await server?.stop(); });

async function loggedIn(options = {}) {
    const client = new RelataClient({ baseURL: server.url, retryDelay: 10, ...options });
    await client.login({ user: 'demo', password: 'demo' });
    return client;
}

test('a wrong password is refused with the server\'s code and status', { timeout: 30_000 }, async () => {
    const client = new RelataClient({ baseURL: server.url });
    await assert.rejects(client.login({ user: 'demo', password: 'nope' }), (error) => error instanceof RelataError && error.code === 'loginFailed' && error.status === 401);
    assert.equal(client.token, null);
});

test('the session\'s values are plain; the row stream and JSON read the same rows', { timeout: 30_000 }, async () => {
    const client = await loggedIn();
    assert.equal(client.session.values.User, 'demo');
    assert.deepEqual(client.session.roles, ['Sales', 'Manager']);
    const requests = ['Clients', 'Providers', 'Products', 'Orders', 'OrderDetails'].map((table) => ({ table }));
    const binary = await client.fetchTables(requests, { withRuleTables: false });
    const json = await client.fetchTables(requests, { binary: false, withRuleTables: false });
    for (const [index, table] of binary.entries()) {
        assert.ok(table.rows.length > 10);
        assert.deepEqual(table.rows.map((row) => row.values), json[index].rows.map((row) => row.values), table.name);
    }
    assert.ok(binary[3].rows[0].get('OrderDate') instanceof Date);
    assert.equal(typeof binary[0].rows[0].get('Active'), 'boolean');
});

test('a where expression with parameters, and an error answer names the field', { timeout: 30_000 }, async () => {
    const client = await loggedIn();
    const clients = await client.fetchTable('Clients', { where: 'ClientId <= :n', parameters: { n: { integer: 3 } } });
    assert.deepEqual(clients.rows.map((row) => row.get('ClientId')), [1, 2, 3]);
    await assert.rejects(client.fetchTable('Clients', { where: 'Nope = 1' }), (error) => error.code === 'unknownField' && error.status === 400);
});

test('the page runs the schema\'s rules: a refusal names the script line, and the row is unchanged', { timeout: 30_000 }, async () => {
    const client = await loggedIn();
    const clients = await client.fetchTable('Clients');
    const row = clients.rows[0];
    assert.throws(() => row.set('CreditLimit', -5), (error) => error.code === 'refused' && error.message === 'the credit limit cannot be negative'
        && error.file === 'rules/Clients.js' && error.line === 15 && error.event === 'beforePost');
    assert.equal(row.state, 'unchanged');
    assert.equal(client.schemaAnswer.schema.tables.find((table) => table.name === 'Orders').script.fileName, 'rules/Orders.js');
});

test('an apply stores an update and an insert; the new row gets its real key, and reads back as stored', { timeout: 30_000 }, async () => {
    const client = await loggedIn();
    const [clients] = await client.fetchTables([{ table: 'Clients' }]);
    clients.rows[1].set('ContactPhone', '555-0101');
    const added = clients.addRow({ ClientName: 'Page Ltd' });
    assert.equal(added.get('CreditLimit'), 1000, 'onNewRow ran in the page');
    assert.ok(added.get('ClientId') < 0);
    const { deltas, failed } = await client.applyChanges([clients]);
    assert.deepEqual(failed, []);
    assert.deepEqual(deltas[0].changes.map((change) => change.status), ['resolved', 'resolved']);
    assert.ok(added.get('ClientId') > 0, 'the real key came back');
    assert.equal(added.state, 'unchanged');
    assert.equal(clients.hasChanges, false);
    const stored = await client.fetchTable('Clients', { where: 'ClientId = :id', parameters: { id: { integer: added.get('ClientId') } } });
    assert.deepEqual(stored.rows[0].values, added.values);
    // The applied rows are the user's again.
    added.set('ContactPhone', '555-0110');
    clients.rows[1].set('ContactPhone', '555-0111');
    assert.equal(clients.pendingRows.length, 2);
});

test('a change the server refuses keeps what the user typed, with the server\'s words', { timeout: 30_000 }, async () => {
    const client = await loggedIn();
    const [orders] = await client.fetchTables([{ table: 'Orders' }, { table: 'Clients' }]);
    const shipped = orders.rows.find((row) => row.get('Status') === 'shipped');
    // Past the page's rules (as a hand-made client would be), the server's rules refuse it.
    orders.rules = null;
    shipped.set('Status', 'open');
    const { failed } = await client.applyChanges([orders]);
    assert.equal(failed.length, 1);
    assert.equal(shipped.state, 'modified');
    assert.equal(shipped.get('Status'), 'open');
    assert.match(shipped.failure.message, /has shipped; it cannot become open/);
    assert.equal(shipped.failure.file, 'rules/Orders.js');
    shipped.revert();   // a refused row is the user's to change or revert
    assert.equal(shipped.state, 'unchanged');
});

test('an apply whose answer never comes stays unanswered with its rows locked, and goes first with the next apply', { timeout: 30_000 }, async () => {
    let online = false;
    const sentIds = [];
    const flakyFetch = async (url, init) => {
        if (String(url).endsWith('/UpdateData')) {
            sentIds.push(JSON.parse(init.body).apply.id);
            if (!online) throw new TypeError('fetch failed: the network is down');
        }
        return fetch(url, init);
    };
    const client = await loggedIn({ fetch: flakyFetch, retries: 1 });
    const [clients] = await client.fetchTables([{ table: 'Clients' }]);
    const row = clients.rows[5];
    row.set('ContactPhone', '555-0120');
    await assert.rejects(client.applyChanges([clients]), (error) => error.code === 'unavailable');
    assert.equal(sentIds.length, 2, 'the first send and one retry');
    assert.ok(client.unansweredApply);
    assert.throws(() => row.set('ContactPhone', '555-0121'), (error) => error.code === 'rowLocked');
    online = true;
    const other = clients.rows[6];
    other.set('ContactPhone', '555-0122');
    await client.applyChanges([clients]);
    assert.equal(sentIds[2], sentIds[0], 'the unanswered batch went first, with its id');
    assert.notEqual(sentIds[3], sentIds[0], 'then the new change, under a new id');
    assert.equal(row.state, 'unchanged');
    assert.equal(other.state, 'unchanged');
    row.set('ContactPhone', '555-0123');
    assert.equal(row.state, 'modified', 'unlocked once answered');
});

test('an apply whose answer is lost is sent again with the same apply id and stored once', { timeout: 30_000 }, async () => {
    let dropped = 0;
    const sentIds = [];
    const losingFetch = async (url, init) => {
        const response = await fetch(url, init);
        if (String(url).endsWith('/UpdateData')) {
            sentIds.push(JSON.parse(init.body).apply.id);
            if (dropped++ === 0) {
                await response.arrayBuffer();
                throw new TypeError('fetch failed: the connection was reset');   // the server applied it; the answer is lost
            }
        }
        return response;
    };
    const client = await loggedIn({ fetch: losingFetch });
    const [clients] = await client.fetchTables([{ table: 'Clients' }]);
    const name = `Retry ${Date.now()}`;
    const added = clients.addRow({ ClientName: name });
    const { failed } = await client.applyChanges([clients]);
    assert.deepEqual(failed, []);
    assert.equal(sentIds.length, 2);
    assert.equal(sentIds[0], sentIds[1], 'the same apply id both times');
    assert.ok(added.get('ClientId') > 0);
    const stored = await client.query(`SELECT COUNT(*) AS N FROM Clients WHERE ClientName = '${name}'`);
    assert.equal(stored.rows[0].get('N'), 1, 'stored once');
    added.set('ContactPhone', '555-0112');
    assert.equal(client.unansweredApply, null);
});

test('rules changed on the server: the apply is refused as stale, the client takes the new rules and resends', { timeout: 60_000 }, async () => {
    const client = await loggedIn();
    const versions = [];
    client.onRulesChanged = (version) => versions.push(version);
    const [clients] = await client.fetchTables([{ table: 'Clients' }]);
    const before = client.schemaAnswer.version;
    clients.rows[2].set('ContactPhone', '555-0102');
    const forbidden = clients.addRow({ ClientName: 'Forbidden' });   // fine under the rules the page has
    appendFileSync(join(server.folder, 'PCTrade/rules/Clients.js'), '\nfunction beforeInsert(row) { if (row.ClientName === "Forbidden") fail("that name is taken"); }\n');
    // The server reads rules files again within a second or so.
    const deadline = Date.now() + 30_000;
    const probe = await loggedIn();
    while ((await probe.getSchema()).version === before) {
        if (Date.now() > deadline) throw new Error('the server did not take the new rules within 30 s');
        await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const { failed } = await client.applyChanges([clients]);
    assert.deepEqual(failed.map((entry) => entry.row), [forbidden], 'the new rules refuse the new row, in the page');
    assert.equal(forbidden.failure.message, 'that name is taken');
    assert.equal(forbidden.state, 'added');
    assert.equal(clients.rows[2].state, 'unchanged', 'the other change was applied');
    assert.notEqual(client.schemaAnswer.version, before);
    assert.deepEqual(versions, [client.schemaAnswer.version]);
    assert.throws(() => clients.addRow({ ClientName: 'Forbidden' }), (error) => error.code === 'refused' && error.message === 'that name is taken');
});

test('an order with a line is made in the page with every rule PCTrade has, and stored with real keys', { timeout: 30_000 }, async () => {
    const client = await loggedIn();
    const [orders, details] = await client.fetchTables([{ table: 'Orders' }, { table: 'OrderDetails' }]);
    assert.ok(client.tables.has('clients') && client.tables.has('products'), 'the tables the rules read came with them');
    const order = orders.addRow({ ClientId: 9, OrderDate: new Date('2026-11-20T10:00:00Z'), ShipAddress: '1 Test Rd' });
    assert.equal(order.get('Status'), 'open', 'onNewRow');
    assert.equal(order.get('ClientName'), client.tables.get('clients').rows.find((row) => row.get('ClientId') === 9).get('ClientName'), 'a lookup field');
    const line = details.addRow({ OrderId: order.get('OrderId'), ProductId: 2, Quantity: 3 });
    const price = client.tables.get('products').rows.find((row) => row.get('ProductId') === 2).get('UnitPrice');
    assert.equal(line.get('UnitPrice'), price, 'beforePost took the catalogue price');
    assert.equal(line.get('LineTotal'), Math.round(3 * price * 100) / 100, 'a calculated field of the table\'s script');
    assert.throws(() => details.addRow({ OrderId: order.get('OrderId'), ProductId: 2, Quantity: 0 }), (error) => error.message === 'the quantity must be at least 1');
    const verdicts = client.validate();
    assert.deepEqual(verdicts.flatMap((delta) => delta.changes.map((change) => change.status)), ['resolved', 'resolved']);
    const { failed } = await client.applyChanges();
    assert.deepEqual(failed, []);
    assert.ok(order.get('OrderId') > 0);
    assert.equal(line.get('OrderId'), order.get('OrderId'), 'the line follows its order\'s real key');
    const stored = await client.query(`SELECT ProductId, Quantity FROM OrderDetails WHERE OrderId = ${order.get('OrderId')}`);
    assert.deepEqual(stored.rows.map((row) => row.values), [[2, 3]]);
});

test('the page refuses what the server would, before sending: an order without lines rolls back every change', { timeout: 30_000 }, async () => {
    let sent = 0;
    const counting = async (url, init) => {
        if (String(url).endsWith('/UpdateData')) sent++;
        return fetch(url, init);
    };
    const client = await loggedIn({ fetch: counting });
    const [orders, clients] = await client.fetchTables([{ table: 'Orders' }, { table: 'Clients' }]);
    const order = orders.addRow({ ClientId: 9, OrderDate: new Date('2026-11-20T10:00:00Z') });
    clients.rows[3].set('ContactPhone', '+1 555 0000');
    const { deltas, failed } = await client.applyChanges();
    assert.equal(sent, 0, 'nothing was sent');
    assert.equal(failed.length, 2);
    assert.equal(order.failure.message, `order ${order.get('OrderId')} has no lines; add at least one before applying`);
    assert.equal(order.failure.event, 'beforeProcessDeltaChange');
    assert.equal(order.failure.file, 'rules/Orders.js');
    assert.match(clients.rows[3].failure.message, /^not applied: the apply was rolled back \(change \d+ of Orders failed: order -\d+ has no lines/);
    assert.equal(order.state, 'added', 'the user\'s rows stay, pending');
    assert.equal(clients.rows[3].get('ContactPhone'), '+1 555 0000');
    assert.equal(deltas.length, 2);
});

test('DA SQL answers a read-only table; a syntax error says where', { timeout: 30_000 }, async () => {
    const client = await loggedIn();
    const totals = await client.query('SELECT Status, COUNT(*) AS Orders FROM Orders GROUP BY Status ORDER BY Status');
    assert.deepEqual(totals.fields.map((field) => field.name), ['Status', 'Orders']);
    assert.ok(totals.rows.length >= 2);
    assert.throws(() => totals.addRow({}), (error) => error.code === 'readOnlyField');
    await assert.rejects(client.query('SELECT FROM'), (error) => error.code === 'querySyntax' && /line 1/.test(error.location));
});

test('the server serves the client and the console to a browser', { timeout: 30_000 }, async () => {
    const page = await fetch(`${server.url}/`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type'), /text\/html/);
    assert.match(page.headers.get('content-security-policy'), /connect-src 'self'/);
    assert.match(await page.text(), /<script type="module" src="\/console.js">/);
    const module = await fetch(`${server.url}/client/relata.js`);
    assert.match(module.headers.get('content-type'), /text\/javascript/);
    const again = await fetch(`${server.url}/client/relata.js`, { headers: { 'If-None-Match': module.headers.get('etag') } });
    assert.equal(again.status, 304);
});

// The web console in headless Chromium against a real `relata serve` of PCTrade: log in, browse,
// an edit the page's rules refuse (message and script line beside the field, the input kept),
// an edit applied and stored, a DA SQL query, the notice when the server's rules change, and for
// an admin role, the server's health, sessions and the refusals its users met.
// A screenshot of the page is kept in $RELATA_ARTIFACTS (.build/artifacts by default).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { join, resolve } from 'node:path';
import { RelataClient } from '../relata.js';
import { relataBinary, startServer } from '../test/support/server.js';
import { Browser, Keys } from '../test/support/webdriver.js';

let server;
let browser;
const artifacts = resolve(process.env.RELATA_ARTIFACTS ?? join(import.meta.dirname ?? '.', '../../../.build/artifacts'));

before(async () => {
    server = await startServer(['--console-admin-role', 'Manager']);
    // Not UTC, on purpose: the page's rules must still see UTC, as they do on every other site.
    browser = await Browser.start({ timeZone: 'Asia/Kolkata' });
}, { timeout: 120_000 });

after(async () => {
    try {
        if (browser) {
            mkdirSync(artifacts, { recursive: true });
            writeFileSync(join(artifacts, 'console.png'), await browser.screenshot());
        }
    } finally {
        await browser?.stop();
        await server?.stop();
    }
});

/** Opens the console and submits the login form (the answer is the caller's to wait for). */
async function openAndLogIn(user, password) {
    await browser.open(`${server.url}/`);
    await browser.waitFor('the login form', 'return document.querySelector("#login-form") !== null;');
    await browser.type('#login-form input[name=user]', user);
    await browser.type('#login-form input[name=password]', password);
    await browser.click('#login-form button');
}

/** The text of the element a selector finds ('' when none). */
const textOf = (selector) => browser.run('const e = document.querySelector(arguments[0]); return e ? e.textContent : "";', selector);

test('the console edits PCTrade with the server\'s rules running in the page', { timeout: 120_000 }, async () => {
    await openAndLogIn('demo', 'wrong');
    await browser.waitFor('a refused login', 'return document.querySelector("#login-error").textContent.includes("wrong");');

    await browser.type('#login-form input[name=password]', 'demo');
    await browser.click('#login-form button');
    await browser.waitFor('the tables', 'return document.querySelectorAll("#tables button").length === 5;');
    assert.match(await textOf('#who'), /demo \(Sales, Manager\)/);
    assert.match(await textOf('#rules-version'), /^rules sha256:/);

    // Browse: the first page of Clients, then a where expression.
    await browser.click('#tables li:nth-child(1) button');
    await browser.waitFor('the Clients rows', 'return document.querySelectorAll("#grid tbody tr").length === 25;');
    assert.match(await textOf('#page'), /page 1 of 2/);
    await browser.type('#filter input[name=where]', 'ClientId <= 3');
    await browser.click('#filter button');
    await browser.waitFor('three rows', 'return document.querySelectorAll("#grid tbody tr").length === 3;');

    // An edit the rules refuse: the message and the script's line beside the field, the input kept.
    await browser.type('input[aria-label="CreditLimit of row (ClientId=1)"]', `-5${Keys.tab}`);
    const refusal = await browser.waitFor('the refusal', 'const e = document.querySelector("#grid [role=alert]"); return e && e.textContent;');
    assert.equal(refusal, 'refused by beforePost: the credit limit cannot be negative (rules/Clients.js:15:9)');
    assert.equal(await browser.run('return document.querySelector(\'input[aria-label="CreditLimit of row (ClientId=1)"]\').value;'), '-5');
    assert.equal(await browser.run('return document.querySelector(\'input[aria-label="CreditLimit of row (ClientId=1)"]\').getAttribute("aria-invalid");'), 'true');
    assert.equal(await textOf('#grid tbody tr:nth-child(1) td.state'), 'unchanged');
    await browser.run('window.scrollTo(0, 0);');
    mkdirSync(artifacts, { recursive: true });
    writeFileSync(join(artifacts, 'console-refusal.png'), await browser.screenshot());

    // An edit the rules accept, applied: the verdict, and the stored row.
    await browser.type('input[aria-label="ContactPhone of row (ClientId=2)"]', `555-0199${Keys.tab}`);
    await browser.waitFor('a modified row', 'return document.querySelector("#grid tbody tr:nth-child(2)").className === "modified";');
    await browser.click('#apply');
    const verdict = await browser.waitFor('the verdict', 'const e = document.querySelector("#verdicts li"); return e && e.textContent;');
    assert.match(verdict, /^Clients update \(change \d+\): resolved$/);
    const reader = new RelataClient({ baseURL: server.url });
    await reader.login({ user: 'demo', password: 'demo' });
    const stored = await reader.fetchTable('Clients', { where: 'ClientId = 2' });
    assert.equal(stored.rows[0].get('ContactPhone'), '555-0199');

    // An order and its line, made in the page with PCTrade's rules, applied together.
    await browser.click('#tables li:nth-child(4) button');
    await browser.waitFor('the Orders rows', 'return document.querySelector("#table-title").textContent === "Orders" && document.querySelectorAll("#grid tbody tr").length > 0;');
    await browser.click('#add-row');
    await browser.waitFor('the new order', 'return document.querySelector(\'input[aria-label="ClientId of row (OrderId=-1)"]\') !== null;');
    assert.equal(await browser.run('return document.querySelector(\'input[aria-label="Status of row (OrderId=-1)"]\').value;'), 'open', 'onNewRow ran in the page');
    await browser.type('input[aria-label="ClientId of row (OrderId=-1)"]', `9${Keys.tab}`);
    await browser.click('#grid tbody tr:last-child button');   // Post
    await browser.waitFor('the posted order', 'return document.querySelector("#grid tbody tr:last-child").className === "added";');
    await browser.click('#apply');
    const noLines = await browser.waitFor('the refusal of an order without lines', 'const e = document.querySelector("#verdicts li.failed"); return e && e.textContent;');
    assert.equal(noLines, 'Orders insert (change 1): refused by beforeProcessDeltaChange: order -1 has no lines; add at least one before applying (rules/Orders.js:34:9)');

    await browser.click('#tables li:nth-child(5) button');
    await browser.waitFor('the OrderDetails rows', 'return document.querySelector("#table-title").textContent === "OrderDetails" && document.querySelectorAll("#grid tbody tr").length > 0;');
    await browser.click('#add-row');
    await browser.waitFor('the new line', 'return document.querySelector(\'input[aria-label="OrderId of row (DetailId=-1)"]\') !== null;');
    await browser.type('input[aria-label="OrderId of row (DetailId=-1)"]', `-1${Keys.tab}`);
    await browser.type('input[aria-label="ProductId of row (DetailId=-1)"]', `2${Keys.tab}`);
    await browser.type('input[aria-label="Quantity of row (DetailId=-1)"]', `0${Keys.tab}`);
    await browser.click('#grid tbody tr:last-child button');   // Post
    assert.equal(await browser.waitFor('the line\'s refusal', 'const e = document.querySelector("#grid tbody tr:last-child [role=alert]"); return e && e.textContent;'),
        'refused by beforePost: the quantity must be at least 1 (rules/OrderDetails.js:15:9)');
    await browser.type('input[aria-label="Quantity of row (DetailId=-1)"]', `2${Keys.tab}`);
    await browser.click('#grid tbody tr:last-child button');   // Post
    await browser.waitFor('the posted line', 'return document.querySelector("#grid tbody tr:last-child").className === "added";');
    await browser.click('#apply');
    await browser.waitFor('both verdicts', 'return [...document.querySelectorAll("#verdicts li")].filter((e) => e.className === "resolved").length === 2;');
    const orderId = await browser.run('return Number(document.querySelector("#grid tbody tr:last-child input").value);');
    const lines = await reader.query(`SELECT OrderId, ProductId, Quantity FROM OrderDetails WHERE DetailId = ${orderId}`);
    assert.equal(lines.rows.length, 1, 'the line is stored');
    assert.deepEqual(lines.rows[0].values.slice(1), [2, 2]);
    const order = await reader.query(`SELECT ClientId, Status FROM Orders WHERE OrderId = ${lines.rows[0].get('OrderId')}`);
    assert.deepEqual(order.rows[0].values, [9, 'open'], 'with its order, under its real key');

    // DA SQL.
    await browser.type('#sql-text', 'SELECT Status, COUNT(*) AS N FROM Orders GROUP BY Status ORDER BY Status');
    await browser.click('#sql-form button');
    await browser.waitFor('the query\'s answer', 'return document.querySelectorAll("#sql-result tbody tr").length >= 2;');
    assert.equal(await textOf('#sql-result thead'), 'StatusN');
    await browser.type('#sql-text', 'SELECT Nope FROM Orders');
    await browser.click('#sql-form button');
    assert.match(await browser.waitFor('the query\'s error', 'return document.querySelector("#sql-error").textContent;'), /Nope/);

    // The server's rules change: the next apply is refused as stale, the page takes the new rules and says so.
    const before = reader.schemaAnswer?.version ?? (await reader.getSchema()).version;
    appendFileSync(join(server.folder, 'PCTrade/rules/Clients.js'), '\n// reviewed\n');
    const deadline = Date.now() + 30_000;
    while ((await reader.getSchema()).version === before) {
        if (Date.now() > deadline) throw new Error('the server did not take the new rules within 30 s');
        await new Promise((resolvePause) => setTimeout(resolvePause, 200));
    }
    await browser.click('#tables li:nth-child(1) button');
    await browser.waitFor('the Clients rows', 'return document.querySelector(\'input[aria-label="ContactPhone of row (ClientId=3)"]\') !== null;');
    await browser.type('input[aria-label="ContactPhone of row (ClientId=3)"]', `555-0198${Keys.tab}`);
    await browser.waitFor('a modified row', 'return document.querySelector("#grid tbody tr:nth-child(3)").className === "modified";');
    await browser.click('#apply');
    const notice = await browser.waitFor('the rules notice', 'const e = document.querySelector("#notice"); return !e.hidden && e.textContent;');
    assert.match(notice, /The server's rules changed \(version sha256:/);
    assert.match(await browser.waitFor('the verdict', 'const e = document.querySelector("#verdicts li"); return e && e.textContent;'), /resolved/);
});

test('an admin sees the server\'s health, its sessions and a refusal another user met', { timeout: 60_000 }, async () => {
    // A clerk's hand-made apply (no rules ran before it) that the server's rules refuse.
    const clerk = new RelataClient({ baseURL: server.url });
    await clerk.login({ user: 'clerk', password: 'clerk' });
    const answer = await clerk.call('DataService', 'UpdateData', { deltas: [{ tableName: 'Clients', keyFields: ['ClientId'], loggedFields: ['ClientId'],
        changes: [{ changeId: 1, type: 'delete', status: 'pending', oldValues: { ClientId: { integer: 1 } }, newValues: {}, refreshedValues: {} }] }] });
    assert.equal(answer.deltas[0].changes[0].status, 'failed');
    assert.equal(clerk.isAdmin, false);
    await assert.rejects(clerk.serverOverview(), (error) => error.code === 'permissionDenied' && /console\.adminRoles/.test(error.message));

    await openAndLogIn('demo', 'demo');
    await browser.waitFor('the Server entry', 'return !document.querySelector("#admin-nav").hidden;');
    await browser.click('#server-view');
    const row = await browser.waitFor('the clerk\'s refusal', `
        const row = [...document.querySelectorAll("#admin-refusals tbody tr")].find((r) => r.textContent.includes("mark the client inactive"));
        return row && [...row.cells].map((cell) => cell.textContent);`);
    assert.equal(row[1], 'clerk');
    assert.equal(row[2], 'refusal (beforeDelete)');
    assert.deepEqual(row.slice(3, 5), ['Clients', 'row (ClientId=1)']);
    assert.match(row[5], /has \d+ orders; mark the client inactive instead/);
    assert.equal(row[6], 'rules/Clients.js:21:9');
    const denied = await browser.run(`return [...document.querySelectorAll("#admin-refusals tbody tr")].map((r) => r.textContent).find((t) => t.includes("permissionDenied")) ?? "";`);
    assert.match(denied, /clerk.*AdminService is for the roles console\.adminRoles names \(\[Manager\]\); this session's roles are \[Clerk\]/);
    const users = await browser.run('return [...document.querySelectorAll("#admin-sessions tbody tr td:first-child")].map((cell) => cell.textContent);');
    assert.ok(users.includes('clerk') && users.includes('demo'), `sessions: ${users}`);
    assert.deepEqual(await browser.run('return [...document.querySelectorAll("#admin-health tbody tr")].map((r) => r.cells[1].textContent);'), ['yes', 'yes']);
    assert.match(await textOf('#admin-status'), /^Ready · protocol v2 · up \d+ s since .* · domain default$/);
    const page = await browser.run('return document.body.innerHTML;');
    assert.ok(!page.includes(clerk.token), 'no session\'s token reaches the page');
    await browser.run('window.scrollTo(0, 0);');
    mkdirSync(artifacts, { recursive: true });
    writeFileSync(join(artifacts, 'console-server.png'), await browser.screenshot());

    // Opening a table leaves the Server page.
    await browser.click('#tables li:nth-child(1) button');
    await browser.waitFor('the Clients rows', 'return document.querySelector("#admin").hidden && !document.querySelector("#browser").hidden;');
    await clerk.logout();
});

test('rules in the page see UTC dates whatever the browser\'s time zone; the page\'s own dates stay local', { timeout: 60_000 }, async () => {
    await browser.open(`${server.url}/`);
    const answer = await browser.runAsync(`
        const done = arguments[arguments.length - 1];
        import('/client/relata.js').then(({ DataTable, RuleSet }) => {
            const fields = [{ name: 'Id', type: 'integer', primaryKey: true }, { name: 'Note', type: 'string' }, { name: 'When', type: 'dateTime' }];
            const table = new DataTable('T', fields);
            table.load([[1, null, new Date('2026-01-15T09:30:00Z')]]);
            const source = "function beforePost(row) { row.Note = [new Date(2026, 0, 15, 9, 30).toISOString(), new Date('2026-01-15T09:30').getHours(), " +
                "row.When.getHours(), row.When.getTimezoneOffset(), String(row.When), row.When.toLocaleString('en-US'), " +
                "new Intl.DateTimeFormat('en-US', { hour: 'numeric' }).format(row.When), row.When instanceof Date].join('|'); row.When = new Date(2026, 1, 1); }";
            table.rules = new RuleSet({ name: 'S', tables: [{ name: 'T', fields, script: { fileName: 'T.js', source } }] });
            table.rows[0].set('Id', 2);
            done({ note: table.rows[0].get('Note'), written: table.rows[0].get('When').toISOString(),
                   pageOffset: new Date().getTimezoneOffset(), pageHours: new Date('2026-01-15T09:30:00Z').getHours() });
        }).catch((error) => done({ error: String(error && error.stack || error) }));`);
    assert.equal(answer.error, undefined, answer.error);
    assert.equal(answer.note, '2026-01-15T09:30:00.000Z|9|9|0|Thu Jan 15 2026 09:30:00 GMT+0000 (Coordinated Universal Time)|1/15/2026, 9:30:00 AM|9 AM|true');
    assert.equal(answer.written, '2026-02-01T00:00:00.000Z', 'a date a rule makes from parts is UTC');
    assert.equal(answer.pageOffset, -330, 'the browser runs in Asia/Kolkata');
    assert.equal(answer.pageHours, 15, 'and the page\'s own Date is left alone');
});

test('an edits file in the page gives the verdicts relata run gives offline on JavaScriptCore', { timeout: 120_000 }, async () => {
    const fresh = await startServer();   // the data as offline: the test above changed the other server's
    try {
        await editsInThePage(fresh);
    } finally {
        await fresh.stop();
    }
});

async function editsInThePage(server) {
    const folder = join(server.folder, 'PCTrade');
    const path = join(folder, 'edits/scenario.json');
    const { stdout } = await promisify(execFile)(relataBinary(), ['run', join(folder, 'PCTrade.schema.json'), '--edits', path, '--json'], { timeout: 60_000 })
        .catch((error) => error);
    const offline = JSON.parse(stdout);
    await browser.open(`${server.url}/`);
    const answer = await browser.runAsync(`
        const [edits, done] = [arguments[0], arguments[arguments.length - 1]];
        import('/client/relata.js').then(async ({ RelataClient, EditRun }) => {
            const client = new RelataClient();
            await client.login({ user: 'demo', password: 'demo' });
            const schema = await client.getSchema();
            await client.fetchTables(schema.schema.tables.map((table) => ({ table: table.name })));
            const run = new EditRun(edits, client.tables);
            run.record((await client.applyChanges()).deltas);
            done(run.report());
        }).catch((error) => done({ error: String(error && error.stack || error) }));`, JSON.parse(readFileSync(path, 'utf8')));
    assert.equal(answer.error, undefined, answer.error);
    assert.deepEqual(answer.verdicts, offline.verdicts);
    assert.deepEqual(answer.summary, offline.summary);
}

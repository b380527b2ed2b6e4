// The same edits files through the page's client and a server, and offline through `relata run`
// (JavaScriptCore): the verdicts, messages, script locations and values must be the same.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { RelataClient } from '../relata.js';
import { EditRun, editSummary } from '../edits.js';
import { relataBinary, startServer } from './support/server.js';

const run = promisify(execFile);
let server;
before(async () => { server = await startServer(); }, { timeout: 90_000 });
after(async () => { await server?.stop(); });

test('an edit\'s summary is the one relata run prints', () => {
    assert.equal(editSummary({ insert: 'Orders', values: {} }), 'insert Orders');
    assert.equal(editSummary({ update: 'Products', key: 7, values: { UnitPrice: 1 } }), 'update Products (key 7)');
    assert.equal(editSummary({ delete: 'T', key: [1, 'a'] }), 'delete T (key 1, "a")');
    assert.equal(editSummary({ delete: 'OrderDetails', key: { ref: 'line.DetailId' } }), 'delete OrderDetails (key ref line.DetailId)');
});

const examples = join(server?.folder ?? '', 'PCTrade/edits');

test('Examples/PCTrade/edits: the page and the server give the verdicts relata run gives offline', { timeout: 120_000 }, async () => {
    const folder = join(server.folder, 'PCTrade');
    const files = readdirSync(join(folder, 'edits')).filter((name) => name.endsWith('.json'));
    assert.ok(files.length >= 1);
    for (const file of files) {
        const path = join(folder, 'edits', file);
        const { stdout } = await run(relataBinary(), ['run', join(folder, 'PCTrade.schema.json'), '--edits', path, '--json'], { timeout: 60_000 }).catch((error) => error);
        const offline = JSON.parse(stdout);
        const edits = JSON.parse(readFileSync(path, 'utf8'));
        const client = new RelataClient({ baseURL: server.url, retryDelay: 10 });
        await client.login({ user: 'demo', password: 'demo' });
        const schema = await client.getSchema();
        await client.fetchTables(schema.schema.tables.map((table) => ({ table: table.name })));
        const page = new EditRun(edits, client.tables);
        page.record((await client.applyChanges()).deltas);
        const report = page.report();
        assert.deepEqual(report.verdicts, offline.verdicts, `${file}: the page and server's verdicts are offline's`);
        assert.deepEqual(report.summary, offline.summary);
    }
});

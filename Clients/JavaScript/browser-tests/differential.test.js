// The differential's fifth column: every scenario of Tests/RelataRemoteTests/Differential (written
// out in differential-corpus.json) made in headless Chromium through the JavaScript client — the
// page's rules, its validation, an apply to a fresh `relata serve` — must give the verdicts,
// messages, script locations and values `relata run` gives offline on JavaScriptCore, and leave
// the rows a server stores when the Swift client (`relata apply`) applies the same edits.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { RelataClient } from '../relata.js';
import { relataBinary, startServer } from '../test/support/server.js';
import { Browser } from '../test/support/webdriver.js';

const run = promisify(execFile);
const corpus = JSON.parse(readFileSync(new URL('./differential-corpus.json', import.meta.url), 'utf8'));
/** The sessions of PCTrade's users (users.json), as `relata run` is told them. */
const sessions = { demo: ['--role', 'Sales', '--role', 'Manager', '--value', 'UserId=1'], clerk: ['--role', 'Clerk', '--value', 'UserId=2'] };

let browser;
before(async () => { browser = await Browser.start({ timeZone: 'America/Los_Angeles' }); }, { timeout: 60_000 });
after(async () => { await browser?.stop(); });

/** Every stored row of every table, by table and key; a date a rule took from the clock during the run reads as such. */
async function storedRows(server, user, since) {
    const client = new RelataClient({ baseURL: server.url });
    await client.login({ user, password: user });
    const schema = await client.getSchema();
    const tables = await client.fetchTables(schema.schema.tables.map((table) => ({ table: table.name })), { binary: false, withRuleTables: false });
    const rows = {};
    for (const table of tables) {
        rows[table.name] = Object.fromEntries(table.rows.map((row) => [String(row.values[table.keyIndexes[0]]),
            row.values.map((value) => (value instanceof Date ? (value.getTime() >= since ? 'a time during the run' : value.toISOString()) : value))]));
    }
    return rows;
}

/** The scenario in the page: log in, fetch every table, make the edits, apply; the report. */
async function inThePage(server, scenario) {
    await browser.open(`${server.url}/`);
    const answer = await browser.runAsync(`
        const [edits, user, done] = [arguments[0], arguments[1], arguments[arguments.length - 1]];
        import('/client/relata.js').then(async ({ RelataClient, EditRun }) => {
            const client = new RelataClient();
            await client.login({ user, password: user });
            const schema = await client.getSchema();
            await client.fetchTables(schema.schema.tables.map((table) => ({ table: table.name })));
            const run = new EditRun(edits, client.tables);
            run.record((await client.applyChanges()).deltas);
            done(run.report());
        }).catch((error) => done({ error: String(error && error.stack || error) }));`, scenario.edits, scenario.user);
    if (answer.error) throw new Error(`the page failed: ${answer.error}`);
    return answer;
}

test('the corpus holds the differential\'s scenarios', () => {
    assert.ok(corpus.scenarios.length >= 50, `${corpus.scenarios.length} scenarios`);
    for (const [name, why] of Object.entries(corpus.leftOut)) assert.ok(why.length > 0, name);
});

for (const scenario of corpus.scenarios) {
    test(`browser column: ${scenario.name}`, { timeout: 120_000 }, async () => {
        const since = Date.now();
        const [pageServer, swiftServer] = await Promise.all([startServer(), startServer()]);
        try {
            const editsFile = join(pageServer.folder, 'scenario-edits.json');
            writeFileSync(editsFile, JSON.stringify(scenario.edits));
            const schemaFile = join(pageServer.folder, 'PCTrade/PCTrade.schema.json');
            const offlineRun = run(relataBinary(), ['run', schemaFile, '--edits', editsFile, '--json', '--user', scenario.user, ...sessions[scenario.user]], { timeout: 60_000 })
                .catch((error) => error);
            const swiftApply = run(relataBinary(), ['apply', swiftServer.url, '--edits', editsFile, '--json', '--user', scenario.user],
                { timeout: 60_000, env: { ...process.env, RELATA_PASSWORD: scenario.user } }).catch((error) => error);
            const page = await inThePage(pageServer, scenario);
            const offline = JSON.parse((await offlineRun).stdout);
            await swiftApply;
            const differences = [];
            page.verdicts.forEach((verdict, index) => {
                const expected = offline.verdicts[index];
                try { assert.deepEqual(verdict, expected); } catch {
                    differences.push(`edit ${index + 1} ${verdict.edit}:\n  offline ${JSON.stringify(expected)}\n  browser ${JSON.stringify(verdict)}`);
                }
            });
            const [pageRows, swiftRows] = await Promise.all([storedRows(pageServer, scenario.user, since), storedRows(swiftServer, scenario.user, since)]);
            for (const table of Object.keys(swiftRows)) {
                for (const key of new Set([...Object.keys(swiftRows[table]), ...Object.keys(pageRows[table] ?? {})])) {
                    const stored = JSON.stringify(swiftRows[table][key] ?? 'absent'), fromPage = JSON.stringify(pageRows[table]?.[key] ?? 'absent');
                    if (stored !== fromPage) differences.push(`${table} row ${key}: after the Swift client ${stored}, after the page ${fromPage}`);
                }
            }
            assert.deepEqual(differences, [], `${scenario.name}:\n${differences.join('\n')}`);
        } finally {
            await Promise.all([pageServer.stop(), swiftServer.stop()]);
        }
    });
}

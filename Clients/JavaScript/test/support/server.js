// A `relata serve` of a copy of Examples/PCTrade on a free loopback port, for one test file:
// started with a deadline, stopped (and its folder removed) when the tests end.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');

/** The `relata` binary: $RELATA_BIN, or this checkout's debug build. */
export function relataBinary() {
    const binary = process.env.RELATA_BIN ?? join(root, '.build/debug/relata');
    if (!existsSync(binary)) throw new Error(`no relata binary at ${binary}: run 'swift build' first, or set RELATA_BIN`);
    return binary;
}

/**
 * Starts a server; resolves with `{url, folder, stop()}` once it listens (within 60 s).
 * @param {string[]} [extraArguments]
 */
export async function startServer(extraArguments = []) {
    const folder = mkdtempSync(join(tmpdir(), 'relata-js-'));
    cpSync(join(root, 'Examples/PCTrade'), join(folder, 'PCTrade'), { recursive: true });
    const child = spawn(relataBinary(), ['serve', 'PCTrade/PCTrade.schema.json', '--port', '0', '--database', 'pctrade.sqlite', ...extraArguments],
        { cwd: folder, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const url = await new Promise((resolvePromise, reject) => {
        const deadline = setTimeout(() => reject(new Error(`relata serve did not start within 60 s:\n${output}`)), 60_000);
        const look = (chunk) => {
            output += chunk;
            const match = /serving \S+ on (http:\/\/[\d.]+:\d+)/.exec(output);
            if (match) {
                clearTimeout(deadline);
                resolvePromise(match[1]);
            }
        };
        child.stdout.on('data', look);
        child.stderr.on('data', (chunk) => { output += chunk; });
        child.on('exit', (code) => {
            clearTimeout(deadline);
            reject(new Error(`relata serve ended (${code}) before it listened:\n${output}`));
        });
    });
    const stop = async () => {
        if (child.exitCode === null) {
            const ended = new Promise((done) => child.once('exit', done));
            child.kill('SIGTERM');
            const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
            await ended;
            clearTimeout(killer);
        }
        rmSync(folder, { recursive: true, force: true });
    };
    return { url, folder, stop, output: () => output };
}

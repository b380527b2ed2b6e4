// Headless Chromium driven over WebDriver (Debian's chromium and chromium-driver): just the calls
// the browser tests use, each request and wait with a deadline, everything stopped at the end.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';

const elementKey = 'element-6066-11e4-a52e-4f735466cecf';

/** A free loopback port. */
function freePort() {
    return new Promise((resolve, reject) => {
        const server = createServer();
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => {
            const { port } = server.address();
            server.close(() => resolve(port));
        });
    });
}

/** Keys WebDriver types: Tab moves on (and fires a field's change), Enter submits. */
export const Keys = Object.freeze({ tab: '\uE004', enter: '\uE007', control: '\uE009', release: '\uE000' });

export class Browser {
    /** Starts chromedriver and a headless Chromium session in a time zone (the machine's when not given). */
    static async start({ timeZone } = {}) {
        const port = await freePort();
        const driver = spawn(process.env.CHROMEDRIVER ?? 'chromedriver', [`--port=${port}`], {
            stdio: ['ignore', 'pipe', 'pipe'], env: timeZone ? { ...process.env, TZ: timeZone } : process.env,
        });
        let output = '';
        await new Promise((resolve, reject) => {
            const deadline = setTimeout(() => reject(new Error(`chromedriver did not start within 30 s:\n${output}`)), 30_000);
            driver.stdout.on('data', (chunk) => {
                output += chunk;
                if (output.includes('started successfully')) { clearTimeout(deadline); resolve(); }
            });
            driver.stderr.on('data', (chunk) => { output += chunk; });
            driver.on('error', (error) => { clearTimeout(deadline); reject(new Error(`chromedriver could not run (${error.message}): install chromium-driver`)); });
            driver.on('exit', (code) => { clearTimeout(deadline); reject(new Error(`chromedriver ended (${code}):\n${output}`)); });
        });
        const browser = new Browser(`http://127.0.0.1:${port}`, driver);
        const args = ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--window-size=1400,1000', '--lang=en-US'];
        const answer = await browser.call('POST', '/session', {
            capabilities: { alwaysMatch: { browserName: 'chrome', 'goog:chromeOptions': { binary: process.env.CHROMIUM ?? '/usr/bin/chromium', args } } },
        });
        browser.session = answer.sessionId;
        return browser;
    }

    constructor(base, driver) {
        this.base = base;
        this.driver = driver;
        this.session = null;
    }

    async call(method, path, body) {
        const signal = AbortSignal.timeout(60_000);
        const response = await fetch(`${this.base}${path}`, {
            method, signal, headers: { 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
        });
        const answer = await response.json();
        if (!response.ok) throw new Error(`WebDriver ${method} ${path}: ${answer.value?.message ?? response.status}`);
        return answer.value;
    }

    sessionCall(method, path, body) { return this.call(method, `/session/${this.session}${path}`, body); }

    open(url) { return this.sessionCall('POST', '/url', { url }); }

    /** Runs a function's text in the page with arguments; its result. */
    run(script, ...args) { return this.sessionCall('POST', '/execute/sync', { script, args }); }

    /** Runs a function's text in the page that ends by calling its last argument with the result; that result. */
    runAsync(script, ...args) { return this.sessionCall('POST', '/execute/async', { script, args }); }

    async find(selector) {
        const found = await this.sessionCall('POST', '/element', { using: 'css selector', value: selector });
        return found[elementKey];
    }

    async click(selector) { await this.sessionCall('POST', `/element/${await this.find(selector)}/click`, {}); }

    /**
     * Replaces a field's text with `text`, typed as a user would: select all, then type (WebDriver's
     * clear would fire the field's change event with an empty value first).
     */
    async type(selector, text) {
        const element = await this.find(selector);
        await this.sessionCall('POST', `/element/${element}/value`, { text: `${Keys.control}a${Keys.release}${text}` });
    }

    /** Waits until `script` (run in the page) returns a truthy value, for at most `seconds`; that value. */
    async waitFor(what, script, ...args) {
        const deadline = Date.now() + 20_000;
        for (;;) {
            const value = await this.run(script, ...args);
            if (value) return value;
            if (Date.now() > deadline) {
                const page = await this.run('return document.body.innerText;');
                throw new Error(`the page did not show ${what} within 20 s; it shows:\n${page}`);
            }
            await new Promise((resolve) => setTimeout(resolve, 100));
        }
    }

    /** A PNG of the page. */
    async screenshot() { return Buffer.from(await this.sessionCall('GET', '/screenshot'), 'base64'); }

    async stop() {
        try { if (this.session) await this.call('DELETE', `/session/${this.session}`); } catch { /* the driver is stopped below anyway */ }
        if (this.driver.exitCode === null) {
            const ended = new Promise((resolve) => this.driver.once('exit', resolve));
            this.driver.kill('SIGTERM');
            const killer = setTimeout(() => this.driver.kill('SIGKILL'), 10_000);
            await ended;
            clearTimeout(killer);
        }
    }
}

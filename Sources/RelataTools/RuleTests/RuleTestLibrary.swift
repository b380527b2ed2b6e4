import RelataScript
/// The JavaScript a rule test file runs with: `test`, `fixture`, the expectations,
/// `setSession`, `log`, and (installed from Swift) `session`, `insert`, `update`, `remove`,
/// `select`, `selectWhere`, `lda` and `apply`. Documented in `Documentation/RuleTests.md`.
enum RuleTestLibrary {
    /// Installed with `relata` in scope (see ``ScriptContext/install(_:)``): what the runner
    /// reads back lives in `relata`, where a test file cannot reach it; the functions a test
    /// file calls become read-only globals.
    static let source = #"""
        relata.tests = [];
        relata.fixtures = [];

        function test(name, body) {
            if (typeof name !== 'string' || typeof body !== 'function')
                throw new TypeError('test(name, body) needs a name and a function');
            relata.tests.push({ name: name, body: body, stack: String(new Error().stack) });
        }

        function fixture(table, rows) {
            if (typeof table !== 'string' || !Array.isArray(rows))
                throw new TypeError('fixture(table, rows) needs a table name and an array of rows');
            relata.fixtures.push({ table: table, rows: rows.slice() });
        }

        // Runs a test body; a body that returns a promise (an async test) is awaited:
        // JavaScriptCore runs the promise's jobs before the call into it returns, so
        // the runner finds the outcome in the returned record.
        relata.runTest = function (body) {
            const result = body();
            if (result === null || (typeof result !== 'object' && typeof result !== 'function') || typeof result.then !== 'function')
                return null;
            const outcome = { settled: false, rejected: false, error: undefined };
            Promise.resolve(result).then(() => { outcome.settled = true; },
                                         (error) => { outcome.settled = true; outcome.rejected = true; outcome.error = error; });
            return outcome;
        };

        class ExpectationFailure extends Error {
            constructor(message) { super(message); this.name = 'ExpectationFailure'; }
        }

        function __relataShow(value) {
            if (value instanceof RegExp) return String(value);
            if (typeof value === 'string') return JSON.stringify(value);
            return relata.show(value);
        }

        function __relataMatches(text, pattern) {
            return pattern instanceof RegExp ? pattern.test(text) : String(text).includes(String(pattern));
        }

        function __relataDescribeError(error) {
            if (error && error.relataKind === 'ruleFailed')
                return "the rule failure '" + error.message + "'" + (error.location ? ' at ' + error.location : '');
            if (error && error.relataKind)
                return "the error '" + error.message + "'" + (error.location ? ' at ' + error.location : '');
            if (relata.isError(error)) return "the error '" + error.message + "'";
            return 'the thrown value ' + __relataShow(error);
        }

        function __relataCatch(body) {
            try { body(); } catch (error) {
                if (error instanceof ExpectationFailure) throw error;
                return { error: error };
            }
            return null;
        }

        // The rules must refuse what `body` does, with a message matching `pattern`
        // (a RegExp, or a string the message contains). Returns the error.
        function expectFail(body, pattern) {
            const wanted = 'a rule failure' + (pattern === undefined ? '' : ' matching ' + __relataShow(pattern));
            const caught = __relataCatch(body);
            if (caught === null) throw new ExpectationFailure('expected ' + wanted + ', but the rules passed');
            const error = caught.error;
            if (!error || error.relataKind !== 'ruleFailed' || (pattern !== undefined && !__relataMatches(error.message, pattern)))
                throw new ExpectationFailure('expected ' + wanted + ', got ' + __relataDescribeError(error));
            return error;
        }

        // Like expectFail, for any error: a rule failure, a wrong value, a missing row.
        function expectError(body, pattern) {
            const wanted = 'an error' + (pattern === undefined ? '' : ' matching ' + __relataShow(pattern));
            const caught = __relataCatch(body);
            if (caught === null) throw new ExpectationFailure('expected ' + wanted + ', but nothing failed');
            const message = relata.isError(caught.error) ? caught.error.message : relata.show(caught.error);
            if (pattern !== undefined && !__relataMatches(message, pattern))
                throw new ExpectationFailure('expected ' + wanted + ', got ' + __relataDescribeError(caught.error));
            return caught.error;
        }

        // The rules must accept what `body` does. Returns what `body` returns.
        function expectPass(body) {
            let result;
            const caught = __relataCatch(() => { result = body(); });
            if (caught !== null) throw new ExpectationFailure('expected the rules to pass, got ' + __relataDescribeError(caught.error));
            return result;
        }

        function expect(actual) {
            const failed = (text) => { throw new ExpectationFailure(text); };
            const same = (a, b) => (a instanceof Date && b instanceof Date) ? a.getTime() === b.getTime() : Object.is(a, b);
            return {
                toBe(expected) { if (!same(actual, expected)) failed('expected ' + __relataShow(expected) + ', got ' + __relataShow(actual)); },
                toEqual(expected) {
                    if (__relataShow(actual) !== __relataShow(expected)) failed('expected ' + __relataShow(expected) + ', got ' + __relataShow(actual));
                },
                toBeCloseTo(expected, digits = 2) {
                    if (typeof actual !== 'number' || !(Math.abs(actual - expected) < Math.pow(10, -digits) / 2))
                        failed('expected ' + expected + ' (to ' + digits + ' decimal places), got ' + __relataShow(actual));
                },
                toBeNull() { if (actual !== null) failed('expected null, got ' + __relataShow(actual)); },
                toBeTruthy() { if (!actual) failed('expected a true value, got ' + __relataShow(actual)); },
                toBeFalsy() { if (actual) failed('expected a false value, got ' + __relataShow(actual)); },
                toBeGreaterThan(limit) { if (!(actual > limit)) failed('expected more than ' + limit + ', got ' + __relataShow(actual)); },
                toBeLessThan(limit) { if (!(actual < limit)) failed('expected less than ' + limit + ', got ' + __relataShow(actual)); },
                toMatch(pattern) {
                    if (typeof actual !== 'string' || !__relataMatches(actual, pattern))
                        failed('expected a string matching ' + __relataShow(pattern) + ', got ' + __relataShow(actual));
                },
                toContain(item) {
                    if (!(Array.isArray(actual) || typeof actual === 'string') || !actual.includes(item))
                        failed('expected ' + __relataShow(actual) + ' to contain ' + __relataShow(item));
                },
            };
        }

        // The session the rules see from now on in this test (each test starts with the runner's).
        function setSession(description) { relata.setSession(description); }
        function log(...parts) {
            relata.log(parts.map(p => typeof p === 'string' ? p : relata.show(p)).join(' '), new Error().stack);
        }

        for (const [name, value] of [['test', test], ['fixture', fixture], ['expectFail', expectFail], ['expectError', expectError],
                                     ['expectPass', expectPass], ['expect', expect], ['ExpectationFailure', ExpectationFailure],
                                     ['setSession', setSession], ['log', log]])
            Object.defineProperty(globalThis, name, { value, writable: false, enumerable: false, configurable: false });
        """#
}

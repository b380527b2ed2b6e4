import Foundation
import Relata
import Testing
import RelataScript
@testable import RelataTools
import RelataTestSupport

/// Rule test files: every expectation passes when it should and fails, readably, when it should not.
@Suite struct RuleTestRunnerTests {
    func run(_ source: String, filter: (String) -> Bool = { _ in true }) throws -> [RuleTestResult] {
        let runner = try RuleTestRunner(schema: Schema(contentsOf: SchemaTests.pcTrade))
        return runner.run(try runner.load(source: source, name: "t.test.js"), filter: filter)
    }

    @Test func expectationsThatHold() throws {
        let results = try run("""
            fixture('Clients', [{ ClientId: 990, ClientName: 'Fixture', CreditLimit: 10, Active: true }]);
            test('all hold', () => {
                const client = select('Clients', 990);
                expect(client.ClientName).toBe('Fixture');
                expect(client.CreditLimit).toBeCloseTo(10);
                expect(client.ContactPhone).toBeNull();
                expect(client.Active).toBeTruthy();
                expect(selectWhere('Clients', 'ClientId = 990').length).toBe(1);
                expect('abc').toMatch(/b/);
                expect([1, 2]).toContain(2);
                expect({ a: 1 }).toEqual({ a: 1 });
                const error = expectFail(() => update('Clients', 990, { ClientDiscount: 0.5 }), /outside 0–30%/);
                expect(error.location).toMatch(/^rules\\/Clients\\.js:13:/);
                expectError(() => update('Clients', 990, { ClientDiscount: 'lots' }), 'not a valid');
                expectPass(() => update('Clients', 990, { ClientDiscount: 0.2 }));
            });
            test('each test starts afresh', () => {
                expect(select('Clients', 990).ClientDiscount).toBe(0);   // the field's default: the fixture leaves it out
            });
            """)
        #expect(results.map(\.passed) == [true, true], "\(results.map { $0.message ?? "" })")
        #expect(results.map(\.line) == [2, 17])
    }

    @Test func expectationsThatFailSayWhyAndWhere() throws {
        let results = try run("""
            test('value', () => {
                expect(select('Clients', 1).ClientName).toBe('Nobody');
            });
            test('passes instead of failing', () => {
                expectFail(() => update('Clients', 1, { ClientDiscount: 0.1 }), 'outside');
            });
            test('wrong message', () => {
                expectFail(() => update('Clients', 1, { ClientDiscount: 0.9 }), 'credit');
            });
            test('unexpected failure', () => {
                update('Clients', 1, { ClientName: '' });
            });
            test('script error', () => {
                null.x;
            });
            test('runaway', () => { while (true) {} });
            """)
        #expect(results.map(\.passed) == [false, false, false, false, false, false])
        #expect(results[0].message == #"expected "Nobody", got "Acme Ltd""#)
        #expect(results[0].location == "t.test.js:2:49")
        #expect(results[1].message == #"expected a rule failure matching "outside", but the rules passed"#)
        #expect(results[2].message?.hasPrefix(#"expected a rule failure matching "credit", got the rule failure 'a discount of 90% is outside 0–30%' at rules/Clients.js:13:9"#) == true)
        #expect(results[3].message == "unexpected rule failure: a client needs a name (rules/Clients.js:11:9 in beforePost)")
        #expect(results[3].location == "t.test.js:11:11")
        #expect(results[4].message?.contains("TypeError") == true)
        #expect(results[4].location == "t.test.js:14:9")
        #expect(results[5].message?.contains("time limit") == true)
    }

    @Test func aSyntaxErrorInATestFileIsLocated() throws {
        let runner = try RuleTestRunner(schema: Schema(contentsOf: SchemaTests.pcTrade))
        let error = #expect(throws: ScriptError.self) { try runner.load(source: "test('x', () => {\n  expect(1).toBe(;\n});", name: "broken.test.js") }
        #expect(error?.location == "broken.test.js:2:18")
    }

    @Test func theFilterPicksTests() throws {
        let results = try run("test('alpha', () => {}); test('beta', () => { throw new Error('no'); });", filter: { $0.contains("alph") })
        #expect(results.map(\.test) == ["alpha"])
    }

    @Test func badFixturesAreReported() throws {
        let results = try run("fixture('Clients', [{ ClientId: 1, Nope: 2 }]); test('x', () => {});")
        #expect(results.first?.passed == false)
        #expect(results.first?.message?.contains("fixture('Clients', …): Clients.Nope, row 1 to load: the table has no such field") == true)
    }
}

/// Rule test files tell the truth: hostile files cannot crash the runner, promises are awaited,
/// and a runaway rule fails only its own test.
@Suite struct RuleTestTruthTests {
    func run(_ source: String, timeLimit: Duration = .seconds(1)) throws -> [RuleTestResult] {
        let runner = try RuleTestRunner(schema: Schema(contentsOf: SchemaTests.pcTrade), engine: ScriptEngine(timeLimit: timeLimit))
        return runner.run(try runner.load(source: source, name: "t.test.js"))
    }

    @Test func aFileOverwritingTheRunnersNamesCannotCrashIt() throws {
        let results = try run("""
            var __relataTests = null, __relataFixtures = 5, relata = null;
            test('still runs', () => { expect(1).toBe(1); });
            test = null; expect = null;
            test('also registered', () => { expect(2).toBe(2); });
            """)
        #expect(results.map(\.passed) == [true, true])
    }

    @Test func asyncTestsAreAwaited() throws {
        let results = try run("""
            test('resolves', async () => { await null; expect(1).toBe(1); });
            test('rejects', () => Promise.reject(new Error('nope')));
            test('fails after await', async () => { await Promise.resolve(); expect(1).toBe(2); });
            test('never settles', () => new Promise(() => {}));
            test('rejects with a plain object', async () => { throw { code: 42 }; });
            """)
        #expect(results.map(\.passed) == [true, false, false, false, false])
        #expect(results[1].message?.contains("nope") == true)
        #expect(results[2].message?.contains("expected 2, got 1") == true, "\(results[2].message ?? "")")
        #expect(results[3].message?.contains("never settled") == true)
        #expect(results[4].message?.contains(#"{"code":42}"#) == true, "\(results[4].message ?? "")")
    }

    @Test func aRunawayTestFailsAloneAndTheNextOneRuns() throws {
        let results = try run("""
            test('runs away', () => { while (true) {} });
            test('next', () => { expect(select('Clients', 1)).toBeTruthy(); });
            test('runs away in a rule', () => { expectPass(() => { for (;;) {} }); });
            test('after that', () => { expect(1).toBe(1); });
            """, timeLimit: .milliseconds(200))
        #expect(results.map(\.passed) == [false, true, false, true], "\(results.map { $0.message ?? "" })")
        #expect(results[0].message?.contains("time limit") == true)
    }
}

extension RuleTestTruthTests {
    @Test func aRuleThatRunsAwayFailsItsOwnTestOnly() throws {
        let schema = try TemporarySchema("""
            {"name": "S", "tables": [{"name": "T", "script": "T.js", "data": "T.csv",
              "fields": [{"name": "Id", "type": "integer", "primaryKey": true}, {"name": "Name", "type": "string"}]}]}
            """, files: ["T.js": "function beforePost(row) { if (row.Name === 'loop') while (true) {} }", "T.csv": "Id,Name\n1,a\n"])
        let runner = try RuleTestRunner(schema: Schema(contentsOf: schema.url), engine: ScriptEngine(timeLimit: .milliseconds(200)))
        let file = try runner.load(source: """
            test('loops', () => { update('T', 1, { Name: 'loop' }); });
            test('next', () => { update('T', 1, { Name: 'b' }); expect(select('T', 1).Name).toBe('b'); });
            test('loops inside expectFail', () => { expectFail(() => update('T', 1, { Name: 'loop' })); });
            test('after that', () => { expect(select('T', 1).Name).toBe('a'); });
            """, name: "t.test.js")
        let results = runner.run(file)
        #expect(results.map(\.passed) == [false, true, false, true], "\(results.map { $0.message ?? "" })")
        #expect(results[0].message?.contains("time limit") == true)
        #expect(results[0].message?.contains("T.js in beforePost") == true, "\(results[0].message ?? "")")
    }
}

extension RuleTestTruthTests {
    /// Fixture rows are checked like any data: a key the schema's data already uses, or a missing required value.
    @Test func fixturesWithDuplicateKeysOrMissingValuesFailNamingTheRow() throws {
        let results = try run("""
            fixture('Clients', [{ ClientId: 990, ClientName: 'New' }, { ClientId: 1, ClientName: 'Taken' }]);
            test('never starts', () => {});
            """)
        #expect(results.map(\.passed) == [false])
        #expect(results[0].kind == .testError)
        let message = results[0].message ?? ""
        #expect(message.contains("fixture('Clients', …)") && message.contains("row 2 to load") && message.contains("(ClientId=1) is already used"),
                "\(message)")
        let missing = try run("""
            fixture('Clients', [{ ClientId: 991 }]);
            test('never starts', () => {});
            """)
        #expect(missing[0].message?.contains("ClientName") == true, "\(missing[0].message ?? "")")
    }
}

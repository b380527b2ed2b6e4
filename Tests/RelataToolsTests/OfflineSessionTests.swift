import Foundation
import Relata
import RelataScript
import RelataTestSupport
@testable import RelataTools
import Testing

/// Rules that read `session` run offline as on a server: the schema file's `session`, a rule test
/// runner's, and `setSession` in a test give them the session a login would.
@Suite(.timeLimit(.minutes(5))) struct OfflineSessionTests {
    static let rules = """
        function beforePost(row) {
            if (session.MemberId === undefined) fail('member undefined');
            if (row.MemberId !== session.MemberId && !session.hasRole('Librarian')) fail('a member borrows for himself only');
        }
        """

    /// A library schema in a folder of its own, with `session` in the schema file when given.
    static func library(session: String? = nil) throws -> (Schema, TemporaryFolder) {
        let folder = try TemporaryFolder()
        _ = try folder.write("Loans.js", rules)
        let file = try folder.write("Library.schema.json", """
            {"name": "Library", \(session.map { "\"session\": \($0)," } ?? "")
             "tables": [{"name": "Loans", "script": "Loans.js",
                         "fields": [{"name": "LoanId", "type": "integer", "primaryKey": true}, {"name": "MemberId", "type": "integer"}]}]}
            """)
        return (try Schema(contentsOf: URL(fileURLWithPath: file)), folder)
    }

    @Test func theSchemaFilesSessionIsWhatOfflineRulesSee() throws {
        let (bare, bareFolder) = try Self.library()
        defer { withExtendedLifetime(bareFolder) {} }
        let bareAdapter = try bare.makeAdapter()
        let loans = try #require(bareAdapter.table(named: "Loans"))
        #expect(throws: ScriptError.self, "no session: the rule refuses") { try loans.addNewRow(values: ["LoanId": 1, "MemberId": 7]) }

        let (member, memberFolder) = try Self.library(session: #"{"user": "ann", "roles": ["Member"], "values": {"MemberId": 7}}"#)
        defer { withExtendedLifetime(memberFolder) {} }
        let adapter = try member.makeAdapter()
        #expect(adapter.session == Session(values: ["User": "ann", "MemberId": 7], roles: ["Member"]))
        let table = try #require(adapter.table(named: "Loans"))
        try table.addNewRow(values: ["LoanId": 1, "MemberId": 7])
        let refused = #expect(throws: ScriptError.self) { try table.addNewRow(values: ["LoanId": 2, "MemberId": 8]) }
        #expect(refused?.message == "a member borrows for himself only")

        #expect(throws: RelataError.self, "a session value must be a field value") {
            let (schema, folder) = try Self.library(session: #"{"values": {"MemberId": [7]}}"#)
            defer { withExtendedLifetime(folder) {} }
            _ = try schema.makeAdapter()
        }
        #expect(throws: RelataError.self, "a misspelt key is named") { try Self.library(session: #"{"usr": "ann"}"#) }
    }

    @Test func ruleTestsSeeTheSessionAndMaySetAnother() throws {
        let (schema, folder) = try Self.library()
        defer { withExtendedLifetime(folder) {} }
        let runner = try RuleTestRunner(schema: schema, session: Session(values: ["User": "ann", "MemberId": 7]))
        let results = runner.run(try runner.load(source: """
            test('a member borrows for himself', () => {
                expect(session.User).toBe('ann');
                expect(session.MemberId).toBe(7);
                expectPass(() => insert('Loans', { LoanId: 1, MemberId: 7 }));
                expectFail(() => insert('Loans', { LoanId: 2, MemberId: 8 }), 'for himself only');
                setSession({ user: 'lib', roles: ['Librarian'], values: { MemberId: 1 } });
                expect(session.hasRole('Librarian')).toBe(true);
                expectPass(() => insert('Loans', { LoanId: 3, MemberId: 8 }));
                log('three loans tried', { by: session.User });
            });
            test('each test starts with the runner session', () => {
                expect(session.User).toBe('ann');
                expectError(() => setSession({ roles: 'Librarian' }), 'roles is not an array');
            });
            """, name: "loans.test.js"))
        #expect(results.map { $0.passed } == [true, true], "\(results.compactMap { $0.message })")
    }
}

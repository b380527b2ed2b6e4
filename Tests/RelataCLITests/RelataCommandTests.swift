import Foundation
import Testing
import RelataTestSupport

/// Each subcommand of the built `relata` binary: output and exit status.
@Suite(.serialized, .timeLimit(.minutes(10))) struct RelataCommandTests {
    let schema = RelataProcess.pcTradeSchema
    let scenario = RelataProcess.packageRoot.appendingPathComponent("Examples/PCTrade/edits/scenario.json").path

    @Test func runPrintsEachVerdict() async throws {
        let result = try await RelataProcess.run(["run", schema, "--edits", scenario])
        #expect(result.status == 1, "some edits are refused")
        #expect(result.output.contains("  1 ✔ insert Orders → row (OrderId=151)  applied"))
        #expect(result.output.contains("LineTotal = 101.08, ProductName = \"Apex Memory 111\""))
        #expect(result.output.contains("refused by beforePost at rules/OrderDetails.js:54:9"))
        #expect(result.output.contains("open orders of Hooli Ltd would total 2692.95, above the credit limit of 2500.00"))
        #expect(result.output.contains("failed by beforeProcessDeltaChange at rules/Products.js:22:9"))
        #expect(result.output.hasSuffix("5 applied, 5 refused, 1 failed\n"))
    }

    @Test func runAsJSON() async throws {
        let result = try await RelataProcess.run(["run", schema, "--edits", scenario, "--json"])
        let report = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
        let verdicts = try #require(report?["verdicts"] as? [[String: Any]])
        #expect(verdicts.count == 11)
        #expect(verdicts[3]["verdict"] as? String == "refused")
        #expect(verdicts[3]["location"] as? String == "rules/OrderDetails.js:54:9")
        #expect((verdicts[1]["values"] as? [String: Any])?["LineTotal"] as? Double == 101.08)
        #expect(report?["summary"] as? [String: Int] == ["applied": 5, "refused": 5, "failed": 1])
    }

    @Test func runWithoutApplyingLeavesChangesPending() async throws {
        let folder = try TemporaryFolder()
        let edits = try folder.write("ok.json", #"[{"update": "Clients", "key": 8, "values": {"ClientDiscount": 0.1}}]"#)
        let result = try await RelataProcess.run(["run", schema, "--edits", edits, "--no-apply"])
        #expect(result.status == 0)
        #expect(result.output.contains("  1 ✔ update Clients (key 8) → row (ClientId=8)  pending"))
    }

    @Test func testRunsPCTradeGreen() async throws {
        let result = try await RelataProcess.run(["test", schema])
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("✔ tests/OrderDetails.test.js › open orders stay within the client credit limit"))
        #expect(result.output.contains("30 passed, 0 failed"))
    }

    @Test func testTurnsRedWhenARuleBreaks() async throws {
        let folder = try TemporaryFolder()
        let source = RelataProcess.packageRoot.appendingPathComponent("Examples/PCTrade")
        for item in ["PCTrade.schema.json", "data", "rules", "tests"] {
            try FileManager.default.copyItem(at: source.appendingPathComponent(item), to: folder.url.appendingPathComponent(item))
        }
        let rules = folder.url.appendingPathComponent("rules/OrderDetails.js")
        let broken = try String(contentsOf: rules, encoding: .utf8).replacingOccurrences(of: "row.Quantity <= 0", with: "row.Quantity < 0")
        try Data(broken.utf8).write(to: rules)
        let result = try await RelataProcess.run(["test", folder.url.appendingPathComponent("PCTrade.schema.json").path])
        #expect(result.status == 1)
        #expect(result.output.contains("✘ tests/OrderDetails.test.js › the quantity must be positive"))
        #expect(result.output.contains(#"expected a rule failure matching "at least 1", but the rules passed"#))
        #expect(result.output.contains("at tests/OrderDetails.test.js:33:15"))
        #expect(result.output.contains("29 passed, 1 failed"))
    }

    @Test func testFilterAndCoverage() async throws {
        let result = try await RelataProcess.run(["test", schema, "--filter", "a client needs a name", "--coverage"])
        #expect(result.status == 0)
        #expect(result.output.contains("1 passed, 0 failed"))
        #expect(result.output.contains("rules/Clients.js: functions 2/4 ran, fail() calls 1/5 reached"))
        #expect(result.output.contains("  never ran: beforeDelete (line 18), beforeUpdate (line 26)\n  never reached: fail at line 13:9, fail at line 15:9, fail at line 21:9, fail at line 28:9"))

        let all = try await RelataProcess.run(["test", schema, "--coverage"])
        #expect(all.output.contains("total: functions 21/21 ran, fail() calls 25/25 reached"))

        let json = try await RelataProcess.run(["test", schema, "--coverage", "--json"])
        let output = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
        #expect(output?["passed"] as? Int == 30)
        let scripts = (output?["coverage"] as? [String: Any])?["scripts"] as? [[String: Any]]
        #expect(scripts?.map { $0["file"] as? String } == ["rules/schema.js", "rules/Clients.js", "rules/Products.js", "rules/Orders.js", "rules/Orders.server.js",
                                                               "rules/OrderDetails.js"])
    }

    @Test func checkReportsFileLineAndColumn() async throws {
        let folder = try TemporaryFolder()
        let bad = try folder.write("bad.js", "function beforePost(row) {\n  if (row.x > ) fail('x');\n}\n")
        let result = try await RelataProcess.run(["check", bad])
        #expect(result.status == 3, "a broken script")
        #expect(result.output.contains("bad.js:2:15: error: SyntaxError: Unexpected token ')'"))
        let good = try await RelataProcess.run(["check", schema])
        #expect(good.status == 0)
        #expect(good.output.contains("1 file and 10 scripts checked: 0 errors, 0 warnings"))
    }

    /// `relata run` and `relata test` give rules the session a login would (`--user`, `--role`,
    /// `--value`): a rule reading `session.MemberId` refused every edit offline before.
    @Test func runAndTestGiveRulesASession() async throws {
        let folder = try TemporaryFolder()
        _ = try folder.write("Loans.js", """
            function beforePost(row) {
                if (session.MemberId === undefined) fail('member undefined');
                if (row.MemberId !== session.MemberId && !session.hasRole('Librarian')) fail('a member borrows for himself only');
            }
            """)
        let schemaFile = try folder.write("Library.schema.json", """
            {"name": "Library", "tests": ["loans.test.js"],
             "tables": [{"name": "Loans", "script": "Loans.js",
                         "fields": [{"name": "LoanId", "type": "integer", "primaryKey": true}, {"name": "MemberId", "type": "integer"}]}]}
            """)
        let edits = try folder.write("edits.json", #"[{"insert": "Loans", "values": {"LoanId": 1, "MemberId": 7}}, {"insert": "Loans", "values": {"LoanId": 2, "MemberId": 8}}]"#)
        _ = try folder.write("loans.test.js", """
            test('the session of the command line', () => {
                expect(session.User).toBe('ann');
                expect(session.MemberId).toBe(7);
                expect(session.Late).toBe(true);
            });
            """)
        let bare = try await RelataProcess.run(["run", schemaFile, "--edits", edits, "--json"])
        let refusals = (try JSONSerialization.jsonObject(with: Data(bare.output.utf8)) as? [String: Any])?["verdicts"] as? [[String: Any]]
        #expect(refusals?.map { $0["message"] as? String } == ["member undefined", "member undefined"], "\(bare.output)")

        let member = try await RelataProcess.run(["run", schemaFile, "--edits", edits, "--user", "ann", "--value", "MemberId=7"])
        #expect(member.status == 1)
        #expect(member.output.hasSuffix("1 applied, 1 refused\n"), "\(member.output)")
        let librarian = try await RelataProcess.run(["run", schemaFile, "--edits", edits, "--value", "MemberId=1", "--role", "Librarian"])
        #expect(librarian.status == 0, "\(librarian.output)")
        let bad = try await RelataProcess.run(["run", schemaFile, "--edits", edits, "--value", "MemberId"])
        #expect(bad.status == 64 && bad.errorOutput.contains("--value takes KEY=VALUE"), "\(bad.errorOutput)")

        let tested = try await RelataProcess.run(["test", schemaFile, "--user", "ann", "--value", "MemberId=7", "--value", "Late=true"])
        #expect(tested.status == 0, "\(tested.output)")
        #expect(tested.output.contains("1 passed, 0 failed"))
    }

    /// `relata check` checks a schema's server-only scripts like its shared ones.
    @Test func checkKnowsServerScripts() async throws {
        let folder = try TemporaryFolder()
        let schemaFile = try folder.write("Lab.schema.json", """
            {"name": "Lab", "serverScript": "lab.server.js",
             "tables": [{"name": "Samples", "serverScript": "samples.server.js", "fields": [{"name": "Id", "type": "integer", "primaryKey": true}]}]}
            """)
        _ = try folder.write("lab.server.js", "function afterLogin(login) {}\n")
        _ = try folder.write("samples.server.js", "function beforePost(row) {\n  if (row.Id > ) fail('x');\n}\n")
        let result = try await RelataProcess.run(["check", schemaFile])
        #expect(result.status == 3, "\(result.output)")
        #expect(result.output.contains("samples.server.js:2:16: error: SyntaxError"), "\(result.output)")
        #expect(result.output.contains("1 file and 2 scripts checked"), "\(result.output)")
    }

    @Test func typesDeclaresTheTables() async throws {
        let result = try await RelataProcess.run(["types", schema])
        #expect(result.status == 0)
        for table in ["Clients", "Providers", "Products", "Orders", "OrderDetails"] {
            #expect(result.output.contains("interface \(table)Row {"))
        }
        #expect(result.output.contains("    readonly LineTotal: number | null;"))
    }

    @Test func badInputSaysWhatToFix() async throws {
        let missing = try await RelataProcess.run(["run", "nope.schema.json", "--edits", "nope.json"])
        #expect(missing.status == 2)
        #expect(missing.errorOutput.hasPrefix("relata: error: "))
        #expect(missing.errorOutput.contains("nope.schema.json: the schema file does not exist"))

        let folder = try TemporaryFolder()
        let edits = try folder.write("e.json", #"[{"update": "Orders", "key": 1, "values": {"Statuss": "open"}}]"#)
        let unknownField = try await RelataProcess.run(["run", schema, "--edits", edits])
        #expect(unknownField.status == 1)
        #expect(unknownField.output.contains("Orders.Statuss: the table has no such field"))

        let noTests = try await RelataProcess.run(["test", schema, "missing.test.js"])
        #expect(noTests.status == 2)
        #expect(noTests.errorOutput.contains("missing.test.js: the test file does not exist"))

        let brokenTest = try folder.write("broken.test.js", "test('x', () => {\n  expect(1).toBe(;\n});\n")
        let syntax = try await RelataProcess.run(["test", schema, brokenTest])
        #expect(syntax.status == 1, "a test file that does not parse is a failing test")
        #expect(syntax.output.contains("broken.test.js:2:18"))

        let usage = try await RelataProcess.run(["frobnicate"])
        #expect(usage.status == 64)
    }
}

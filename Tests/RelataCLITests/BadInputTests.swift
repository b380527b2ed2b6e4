import Foundation
import Testing
import RelataTestSupport

/// Bad input never crashes `relata`: every error names its file and place, nothing the user
/// has is overwritten, and the exit status follows one rule (0 pass, 1 the rules said no,
/// 2 bad input, 3 a rule is broken, 64 a wrong command line).
@Suite(.timeLimit(.minutes(10))) struct BadInputTests {
    let schema = RelataProcess.pcTradeSchema

    /// A one-table schema with the given rule script, in a temporary folder.
    func tinySchema(_ folder: TemporaryFolder, script: String = "", calculated: String? = nil) throws -> String {
        _ = try folder.write("T.js", script)
        _ = try folder.write("T.csv", "Id,N\n1,1\n2,2\n")
        let calculatedFields = calculated.map { #", "calculatedFields": [{"name": "C", "type": "integer", "function": "\#($0)"}]"# } ?? ""
        return try folder.write("s.schema.json", """
            {"name": "S", "tables": [{"name": "T", "script": "T.js", "data": "T.csv",
              "fields": [{"name": "Id", "type": "integer", "primaryKey": true}, {"name": "N", "type": "integer"}]\(calculatedFields)}]}
            """)
    }

    @Test(arguments: ["inf", "nan", "1e300", "0", "-1", "86401"])
    func aTimeLimitOutOfRangeIsAUsageError(value: String) async throws {
        let result = try await RelataProcess.run(["test", schema, "--time-limit=\(value)"])
        #expect(result.status == 64, "\(value): \(result.errorOutput)")
        #expect(result.errorOutput.contains("--time-limit"))
    }

    @Test func unreadableInputsNameThePathAndTheReason() async throws {
        let folder = try TemporaryFolder()
        let notJSON = try folder.write("bad.schema.json", "{\"name\": \"S\",\n  \"tables\": [\n}")
        let result = try await RelataProcess.run(["check", notJSON])
        #expect(result.status == 2)
        #expect(result.output.contains("bad.schema.json: error: the schema file is not valid JSON: line 3, column 1"), "\(result.output)")

        let latin1 = folder.url.appendingPathComponent("latin1.schema.json")
        try Data([0x7B, 0x0A, 0xE9, 0x7D]).write(to: latin1)
        let encoding = try await RelataProcess.run(["run", latin1.path, "--edits", notJSON])
        #expect(encoding.errorOutput.contains("is not UTF-8 text (line 2"), "\(encoding.errorOutput)")

        let aFolder = try await RelataProcess.run(["run", folder.url.path, "--edits", notJSON])
        #expect(aFolder.errorOutput.contains("the schema file is a folder, not a file"))

        for output in [result, encoding, aFolder] {
            #expect(!output.errorOutput.contains("NSCocoaErrorDomain") && !output.errorOutput.contains("isn’t in the correct format"))
        }
    }

    @Test func checkCatchesWhatRunWouldReject() async throws {
        let folder = try TemporaryFolder()
        _ = try folder.write("T.js", "function beforePost(row) {}\nfunction calc(row) { return 1 }\n")
        _ = try folder.write("T.csv", "Id,N\n1,1\n1,2\n")
        func check(_ schema: String) async throws -> RelataProcess {
            try await RelataProcess.run(["check", try folder.write("s.schema.json", schema)])
        }
        let table = #""name": "T", "script": "T.js", "fields": [{"name": "Id", "type": "integer", "primaryKey": true}, {"name": "N", "type": "integer"}]"#
        let misspelt = try await check(#"{"name": "S", "tables": [{"name": "T", "scirpt": "T.js", "fields": []}]}"#)
        #expect(misspelt.status == 2)
        #expect(misspelt.output.contains("tables[0].scirpt: unknown key 'scirpt' (did you mean 'script'?)"), "\(misspelt.output)")
        let badData = try await check(#"{"name": "S", "tables": [{"#+table+#", "data": "T.csv"}]}"#)
        #expect(badData.output.contains("T.csv, line 3"), "duplicate keys in data: \(badData.output)")
        let calculated = try await check(#"{"name": "S", "tables": [{"#+table+#", "calculatedFields": [{"name": "C", "type": "integer", "function": "clac"}]}]}"#)
        #expect(calculated.status == 3)
        #expect(calculated.output.contains("names function clac, which the table's script does not define"))
        let lookup = try await check(#"{"name": "S", "tables": [{"#+table+#", "lookupFields": [{"name": "L", "sourceField": "Nope", "lookupTable": "T", "lookupKeyField": "Id", "lookupResultField": "N"}]}]}"#)
        #expect(lookup.output.contains("'Nope'"))
        let collide = try await check(#"{"name": "S", "tables": [{"name": "T", "fields": [{"name": "a", "type": "integer"}, {"name": "A", "type": "integer"}]}]}"#)
        #expect(collide.output.contains("the field name is used twice"))
        let negative = try await check(#"{"name": "S", "tables": [{"name": "T", "fields": [{"name": "a", "type": "string", "size": -3}]}]}"#)
        #expect(negative.output.contains("the size is -3; it cannot be negative"))
        _ = try folder.write("T.js", "function beforePost(row) {}\nthrow new Error('at the top');\n")
        let topLevel = try await check(#"{"name": "S", "tables": [{"#+table+#"}]}"#)
        #expect(topLevel.status == 3)
        #expect(topLevel.output.contains("T.js:2:"), "\(topLevel.output)")
        let edits = try await RelataProcess.run(["check", try folder.write("e.json", #"[{"update": "T", "key": 1, "valeus": {"N": 1}}]"#)])
        #expect(edits.output.contains("[0].valeus: unknown key 'valeus' (did you mean 'values'?)"))
    }

    @Test func testFilesMissingOrAFolderAreTheSameKindOfProblem() async throws {
        let folder = try TemporaryFolder()
        let missing = try await RelataProcess.run(["test", schema, "nope.test.js"])
        let aFolder = try await RelataProcess.run(["test", schema, folder.url.path])
        #expect(missing.status == 2 && aFolder.status == 2)
        #expect(missing.errorOutput.contains("nope.test.js: the test file does not exist"))
        #expect(aFolder.errorOutput.contains("the test file is a folder"))
    }

    @Test func nothingToRunIsNotSuccess() async throws {
        let folder = try TemporaryFolder()
        let noTests = try await RelataProcess.run(["test", try tinySchema(folder)])
        #expect(noTests.status == 2)
        #expect(noTests.errorOutput.contains("the schema lists no test files"), "\(noTests.errorOutput)")
        #expect(!noTests.errorOutput.contains("ValidationError"))
        let noMatch = try await RelataProcess.run(["test", schema, "--filter", "no test is called this"])
        #expect(noMatch.status == 2)
        #expect(noMatch.errorOutput.contains("no test matches --filter"))
    }

    @Test func aBrokenRuleIsNotARefusal() async throws {
        let folder = try TemporaryFolder()
        let schema = try tinySchema(folder, script: """
            function beforePost(row) {
                if (row.N === 5) fail('no fives');
                if (row.N === 6) row.nothing.here = 1;
                if (row.N === 7) throw { code: 42 };
            }
            """)
        let edits = try folder.write("e.json", """
            [{"update": "T", "key": 1, "values": {"N": 5}}, {"update": "T", "key": 2, "values": {"N": 6}},
             {"update": "T", "key": 1, "values": {"N": 7}}]
            """)
        let run = try await RelataProcess.run(["run", schema, "--edits", edits, "--json"])
        #expect(run.status == 3, "a broken rule outranks a refusal")
        let json = try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any]
        let verdicts = json?["verdicts"] as? [[String: Any]] ?? []
        #expect(verdicts.map { $0["kind"] as? String } == ["refusal", "ruleError", "ruleError"])
        #expect((verdicts.last?["message"] as? String)?.contains(#"{"code":42}"#) == true)

        let text = try await RelataProcess.run(["run", schema, "--edits", edits])
        #expect(text.output.contains("refused by beforePost"))
        #expect(text.output.contains("refused: a rule is broken (error in beforePost"))

        let refusalOnly = try folder.write("r.json", #"[{"update": "T", "key": 1, "values": {"N": 5}}]"#)
        #expect(try await RelataProcess.run(["run", schema, "--edits", refusalOnly]).status == 1)

        let tests = try folder.write("t.test.js", """
            test('refused', () => { update('T', 1, { N: 5 }); });
            test('broken', () => { update('T', 1, { N: 6 }); });
            """)
        let testRun = try await RelataProcess.run(["test", schema, tests, "--json"])
        #expect(testRun.status == 3)
        let results = (try JSONSerialization.jsonObject(with: Data(testRun.output.utf8)) as? [String: Any])?["results"] as? [[String: Any]]
        #expect(results?.map { $0["kind"] as? String } == ["refusal", "ruleError"])
    }

    @Test func aCalculatedFieldThatThrowsIsAnErrorOnItsEdit() async throws {
        let folder = try TemporaryFolder()
        let schema = try tinySchema(folder, script: "function calc(row) { if (row.N === 9) throw new Error('nine'); return row.N * 2; }",
                                    calculated: "calc")
        let edits = try folder.write("e.json", #"[{"update": "T", "key": 1, "values": {"N": 9}}]"#)
        let run = try await RelataProcess.run(["run", schema, "--edits", edits])
        #expect(run.status == 3)
        #expect(run.output.contains("applied, but a rule is broken"), "\(run.output)")
        #expect(run.output.contains("T.C, row (Id=1): calculated field failed: T.js:1:"), "\(run.output)")
        #expect(run.output.contains("nine"))
    }

    @Test func outputsNeverReplaceAFileTheCommandDidNotMake() async throws {
        let folder = try TemporaryFolder()
        let precious = try folder.write("notes.txt", "my notes")
        let edits = try folder.write("e.json", #"[{"update": "Orders", "key": 1, "values": {"ShipAddress": "1 New Road"}}]"#)
        let save = try await RelataProcess.run(["run", schema, "--edits", edits, "--no-apply", "--save-briefcase", precious])
        #expect(save.status == 2)
        #expect(save.output.contains("1 edit"), "the report is printed before the save fails")
        #expect(save.errorOutput.contains("a file that is not a Relata briefcase is there"))
        #expect(try String(contentsOfFile: precious, encoding: .utf8) == "my notes")
        let forced = try await RelataProcess.run(["run", schema, "--edits", edits, "--no-apply", "--save-briefcase", precious, "--force"])
        #expect(forced.status == 0, "\(forced.errorOutput)")
        let again = try await RelataProcess.run(["run", schema, "--edits", edits, "--no-apply", "--save-briefcase", precious])
        #expect(again.status == 0, "a briefcase may be replaced by a briefcase")
        let nowhere = try await RelataProcess.run(["run", schema, "--edits", edits, "--no-apply", "--save-briefcase", "/nonexistent/x.briefcase"])
        #expect(nowhere.status == 2 && nowhere.output.contains("1 edit"))
        #expect(nowhere.errorOutput.contains("the folder /nonexistent does not exist"))

        let types = try await RelataProcess.run(["types", schema, "--output", edits])
        #expect(types.status == 2)
        #expect(try String(contentsOfFile: edits, encoding: .utf8).contains("Orders"))
        let declarations = folder.url.appendingPathComponent("relata.d.ts").path
        #expect(try await RelataProcess.run(["types", schema, "--output", declarations]).status == 0)
        #expect(try await RelataProcess.run(["types", schema, "--output", declarations]).status == 0, "its own output may be replaced")

        let export = try await RelataProcess.run(["briefcase", "export", precious, "--table", "Orders", "--output", edits])
        #expect(export.status == 2)
        #expect(try await RelataProcess.run(["briefcase", "export", precious, "--table", "Orders", "--output", edits, "--force"]).status == 0)
    }
}

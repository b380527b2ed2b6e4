import Foundation
import Relata
import Testing
import RelataScript
@testable import RelataTools
import RelataTestSupport

/// `relata check` and `relata types`, from the library side.
@Suite struct ScriptCheckTests {
    @Test func syntaxErrorsHaveFileLineAndColumn() throws {
        let diagnostics = ScriptCheck.check(RuleScript("function beforePost(row) {\n  if (row.x > ) fail('x');\n}", fileName: "rules/A.js"),
                                            engine: try ScriptEngine())
        #expect(diagnostics.map(\.description) == ["rules/A.js:2:15: error: SyntaxError: Unexpected token ')'"])
    }

    @Test func misspelledHandlersAreWarnedAbout() throws {
        let diagnostics = ScriptCheck.check(RuleScript("function beforeUpate(row, old) {}\nfunction BeforePost(row) {}\nfunction newRow() {}\nfunction beforePost(row) {}",
                                                       fileName: "A.js"), engine: try ScriptEngine())
        #expect(diagnostics.map(\.line) == [1, 2])
        #expect(diagnostics.allSatisfy { $0.severity == .warning })
        #expect(diagnostics[0].message == "beforeUpate looks like the event handler beforeUpdate misspelled; as written it never runs as a handler")
    }

    @Test func typeScriptDeclaresEveryTableAndField() throws {
        let schema = try Schema(contentsOf: SchemaTests.pcTrade)
        let text = TypeScriptDeclarations.make(for: schema.description)
        for table in schema.description.tables {
            #expect(text.contains("interface \(table.name)Row {"))
            for field in table.fields { #expect(text.contains(" \(field.name): ")) }
        }
        #expect(text.contains("    readonly OrderId: number;"))
        #expect(text.contains("    ShipAddress: string | null;"))
        #expect(text.contains("    OrderDate: Date;"))
        #expect(text.contains("    readonly LineTotal: number | null;"))
        #expect(text.contains("    readonly ProductName: string | null;"))
        #expect(text.contains(#"type TableName = "Clients" | "Providers" | "Products" | "Orders" | "OrderDetails";"#))
        #expect(text.contains("declare function fail(message?: string): never;"))
        #expect(text.contains("declare const lda: {"))
        #expect(text.contains("beforeGetData(tableNames: TableName[], requests: DataRequest[])"))
        #expect(!text.contains("declare function expectFail("), "rule scripts have no test API")

        let tests = TypeScriptDeclarations.make(for: schema.description, audience: .tests)
        #expect(tests.contains("declare function expectFail(body: () => unknown, pattern?: string | RegExp): RuleError;"))
        #expect(tests.contains("declare function test(name: string, body: () => void | Promise<void>): void;"))
        #expect(tests.contains("declare const lda: {"))
        for ruleOnly in ["fail", "newGuid", "isServer", "schema"] {
            #expect(!tests.contains("declare function \(ruleOnly)(") && !tests.contains("declare const \(ruleOnly):"), "\(ruleOnly)")
        }
        // Test files log, and see (and set) the session rules see.
        #expect(tests.contains("declare function log(...parts: unknown[]): void;") && tests.contains("declare const session: Session;"))
        #expect(tests.contains("declare function setSession(session: { user?: string; roles?: string[]; values?: Record<string, unknown> }): void;"))
    }

    /// Each global the declarations promise exists at run time, in rule scripts and in test files alike.
    @Test func theDeclaredGlobalsAreTheRuntimes() throws {
        let schema = try Schema(contentsOf: SchemaTests.pcTrade)
        func declared(_ text: String) -> [String] {
            text.split(separator: "\n").compactMap { line -> String? in
                for prefix in ["declare function ", "declare const ", "declare class "] where line.hasPrefix(prefix) {
                    return String(line.dropFirst(prefix.count).prefix { $0.isLetter || $0.isNumber || $0 == "_" })
                }
                return nil
            }
        }
        let adapter = try schema.makeAdapter()
        for name in declared(TypeScriptDeclarations.make(for: schema.description)) {
            #expect(adapter.runtime.scriptScope(ofTable: "Orders", hasGlobal: name), "rule scripts: \(name)")
        }
        let runner = try RuleTestRunner(schema: schema)
        let file = try runner.load(source: "", name: "empty.test.js")
        for name in declared(TypeScriptDeclarations.make(for: schema.description, audience: .tests)) {
            #expect(runner.hasGlobal(name, in: file), "test files: \(name)")
        }
    }

    @Test func hostileNamesStillMakeValidDeclarations() throws {
        let names = ["with space", "quote'\"s", "back\\slash", "new\nline", "*/ closing", "Größe", "1st", "__proto__", "$dollar"]
        let table = SchemaDescription.Table(name: "T */ x", fields: names.map { FieldDefinition($0, .integer) })
        let other = SchemaDescription.Table(name: "T *_ x", fields: [FieldDefinition("a", .string)])
        let text = TypeScriptDeclarations.make(for: SchemaDescription(name: "S */", tables: [table, other]))
        let property = #/^    (readonly )?([A-Za-z_$][A-Za-z0-9_$]*|"([^"\\\n]|\\.)*"): [A-Za-z| ]+;$/#
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let inInterfaces = lines.filter { $0.hasPrefix("    ") && !$0.hasPrefix("    /**") && $0.hasSuffix(";") && !$0.contains("(") }
        for line in inInterfaces.prefix(names.count + 1) { #expect((try? property.wholeMatch(in: String(line))) != nil, "\(line)") }
        #expect(text.contains("interface T____xRow {") && text.contains("interface T____xRow2 {"), "names that clean up alike stay apart")
        for line in lines where line.contains("/*") { #expect(line.components(separatedBy: "*/").count <= 2, "\(line)") }
        #expect(!text.contains("new\nline\""))
    }
}

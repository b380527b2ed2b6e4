import Foundation
import Relata
import Testing
@testable import RelataScript

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
        #expect(text.contains("type TableName = 'Clients' | 'Providers' | 'Products' | 'Orders' | 'OrderDetails';"))
        #expect(text.contains("declare function fail(message?: string): never;"))
        #expect(text.contains("declare const lda: {"))
        #expect(text.contains("declare function expectFail("))
    }
}

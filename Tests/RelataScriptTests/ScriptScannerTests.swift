import Testing
@testable import RelataScript

/// The scanner behind coverage reports and `relata check`'s handler warnings.
@Suite struct ScriptScannerTests {
    @Test func findsTopLevelFunctionsAndFailCalls() {
        let scan = ScriptScanner("""
            // fail('in a comment') and function commented() {}
            const statuses = ['open', "fail('in a string')"]
            function beforePost(row) {
                if (row.x < 0) fail('negative');
                const inner = function nested() { fail(`template ${row.x}`); };
                if (/fail\\(/.test(row.Name)) other.fail('a method, not the global');
            }
            /* function hidden() {} */
            function helper(a) { return a / 2 }
            var lambda = function notADeclaration() {};
            function beforeUpdate(row, old) { fail ('spaced'); }
            """)
        #expect(scan.functions == [.init(name: "beforePost", line: 3), .init(name: "helper", line: 9), .init(name: "beforeUpdate", line: 11)])
        #expect(scan.failCalls == [.init(line: 4, column: 20), .init(line: 5, column: 39), .init(line: 11, column: 35)])
    }
}

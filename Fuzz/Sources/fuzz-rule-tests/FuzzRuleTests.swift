import Foundation
import FuzzSupport
import Relata
import RelataScript
import RelataTools

/// Rule test files: loaded and run against a one-table schema with a rule, with a short time limit.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRuleTests(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let file = try? runner.load(source: fuzzText(start, count), name: "fuzz.test.js") else { return 0 }
    _ = runner.run(file)
    return 0
}

nonisolated(unsafe) let runner: RuleTestRunner = {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("relata-fuzz-rule-tests-\(getpid())")
    try! FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    try! Data("function beforePost(row) { if (row.N < 0) fail('negative ' + row.N); }\n".utf8)
        .write(to: folder.appendingPathComponent("T.js"))
    try! Data("Id,N,Name\n1,1,a\n2,2,\n".utf8).write(to: folder.appendingPathComponent("T.csv"))
    let schema = #"""
        {"name": "Fuzz", "tables": [{"name": "T", "script": "T.js", "data": "T.csv",
          "fields": [{"name": "Id", "type": "autoInc", "primaryKey": true}, {"name": "N", "type": "integer"},
                     {"name": "Name", "type": "string", "size": 10}]}]}
        """#
    let url = folder.appendingPathComponent("fuzz.schema.json")
    try! Data(schema.utf8).write(to: url)
    return try! RuleTestRunner(schema: Schema(contentsOf: url), engine: ScriptEngine(timeLimit: .milliseconds(50)))
}()

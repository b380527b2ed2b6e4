import Foundation
import Relata
import Testing
@testable import RelataScript

/// Values packed for JavaScript in bulk must arrive as the values made one by one.
@Suite struct PackedValuesTests {
    /// Every kind of value, and the strings that break naive packing (empty, NUL, surrogate pairs).
    static let values: [Value] = [
        .null, .integer(0), .integer(-1), .integer(Int64.max), .integer(Int64.min),
        .double(-0.0), .double(.nan), .double(.infinity), .double(1.5e-300),
        .decimal(Decimal(string: "12.34")!), .boolean(true), .boolean(false),
        .string(""), .string("plain"), .string("a\u{0}b"), .string("😀 é ﬁ"), .string(""),
        .guid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!),
        .date(Date(timeIntervalSince1970: 1_732_612_347.956)), .date(Date(timeIntervalSince1970: -86_400 * 365 * 800)),
        .blob(Data([1, 2, 3])), .blob(Data()), .string("after the blobs"), .null,
    ]

    @Test func unpackedValuesAreTheValuesMadeOneByOne() throws {
        let engine = try ScriptEngine()
        let context = engine.context
        _ = try engine.evaluate("""
            globalThis.unpackForTest = (function () { const relata = {}; \(PackedValues.unpackScript) return relata.unpack; })();
            globalThis.compareForTest = function (unpacked, ...expected) {
                const same = (a, b) => {
                    if (a instanceof Date && b instanceof Date) return Object.is(a.getTime(), b.getTime());
                    if (a instanceof Uint8Array && b instanceof Uint8Array) return a.length === b.length && a.every((x, i) => x === b[i]);
                    return Object.is(a, b);
                };
                if (unpacked.length !== expected.length) return 'length ' + unpacked.length + ' vs ' + expected.length;
                return expected.map((e, i) => same(unpacked[i], e) ? '' : i + ': ' + String(unpacked[i]) + ' vs ' + String(e)).filter(x => x).join('; ');
            };
            undefined;
            """)
        var packed = PackedValues()
        for value in Self.values { packed.append(value) }
        #expect(packed.count == Self.values.count)
        let unpacked = try context.call(try context.globalFunction(named: "unpackForTest")) { packed.appendArguments(to: &$0, in: context) }
        let differences = try context.call(try context.globalFunction(named: "compareForTest")) { arguments in
            arguments.append(unpacked)
            for value in Self.values { arguments.append(context.jsValue(value)) }
        }
        #expect(try context.value(from: differences) == .string(""))
    }

    @Test func scriptsReplacingDateAndSubstringDoNotChangeWhatRulesSee() throws {
        let fields = [FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("Name", .string), FieldDefinition("At", .dateTime)]
        let schema = try SchemaDefinition(name: "Calendar", tables: [
            TableDefinition(name: "Events", fields: fields, script: RuleScript("""
                Date = function () { return 'not a date'; };
                String.prototype.substring = function () { return 'not a substring'; };
                function beforeProcessDeltaChange(delta, change) {
                    if (change.Name !== 'launch') fail('Name is ' + change.Name);
                    if (typeof change.At.getTime !== 'function') fail('At is not a date');
                }
                """, fileName: "events.js")),
        ])
        let adapter = try LocalDataAdapter(schema: schema, tables: [try DataTable(name: "Events", fields: fields)])
        let events = try #require(adapter.table(named: "Events"))
        try events.addNewRow(values: ["Id": 1, "Name": "launch", "At": .date(Date(timeIntervalSince1970: 0))])
        let checked = try adapter.validateApply(for: [events])
        #expect(checked.flatMap(\.changes).map(\.status) == [.resolved], "\(checked.flatMap(\.changes).compactMap(\.message))")
    }
}

import Foundation
import Relata
import Testing
@testable import RelataScript

/// Rules read a row's and `old`'s fields by name: a name spelt as the field is found byte for
/// byte without making a Swift string; every other spelling still reads what it read before —
/// another case on the row, a canonically equivalent name, a long name, a calculated field — and
/// a name that is no field is an error on the row and `undefined` on `old`.
@Suite(.timeLimit(.minutes(1))) struct FieldNameReadTests {
    static let long = "A" + String(repeating: "very", count: 20) + "LongName"
    static let fields = [
        FieldDefinition("Id", .integer, primaryKey: true), FieldDefinition("Qty", .integer),
        FieldDefinition("Gr\u{00F6}\u{00DF}e", .integer), FieldDefinition(long, .integer), FieldDefinition("Note", .string),
    ]

    /// A table whose `beforeUpdate` writes into `Note` what `reads` (a JavaScript array expression) gives.
    static func table(reading reads: String) throws -> (LocalDataAdapter, DataTable) {
        let schema = try SchemaDefinition(name: "Reads", tables: [
            TableDefinition(name: "Items", fields: fields, script: RuleScript("""
                function beforeUpdate(row, old) {
                    if (row.Note !== old.Note) return;
                    row.Note = \(reads).map(String).join('|');
                }
                """, fileName: "items.js"), calculatedFields: [CalculatedFieldDefinition(name: "Twice", type: .integer, function: "function (row) { return row.Qty * 2 }")]),
        ])
        let table = try DataTable(name: "Items", fields: fields)
        try table.loadRows([[1, 5, 7, 9, "start"]])
        let adapter = try LocalDataAdapter(schema: schema, tables: [table])
        return (adapter, try #require(adapter.table(named: "Items")))
    }

    @Test func everySpellingReadsTheFieldItReadBefore() throws {
        let (adapter, items) = try Self.table(reading: """
            [row.Qty, row.qty, row.QTY, row['Gr\\u00f6\\u00dfe'], row['Gro\\u0308\\u00dfe'], row['\(Self.long)'],
             row['\(Self.long.lowercased())'], row.Twice,
             old.Qty, old['Gr\\u00f6\\u00dfe'], old['Gro\\u0308\\u00dfe'], old['\(Self.long)'], typeof old.qty, typeof old.Nothing, typeof old.toString]
            """)
        try withExtendedLifetime(adapter) {
            try items.rows[0].setValue(6, forKey: "Qty")
            #expect(items.rows[0]["Note"] == "6|6|6|7|7|9|9|12|5|7|7|9|undefined|undefined|function")
        }
    }

    @Test func aNameThatIsNoFieldIsAnErrorOnTheRow() throws {
        let (adapter, items) = try Self.table(reading: "[row.Quantity]")
        defer { withExtendedLifetime(adapter) {} }
        #expect { try items.rows[0].setValue(6, forKey: "Qty") } throws: { error in
            "\(error)".contains("no field 'Quantity'")
        }
    }
}

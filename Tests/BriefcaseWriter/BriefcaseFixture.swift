import Relata

/// Generation `n` of the crash test's briefcase: two tables and a property,
/// every value derived from `n`, so a mix of two generations is detectable.
enum BriefcaseFixture {
    static func make(generation: Int, rows: Int) throws -> Briefcase {
        let items = try DataTable(name: "Items", fields: [
            FieldDefinition("Id", .autoInc, primaryKey: true),
            FieldDefinition("Generation", .integer),
            FieldDefinition("Label", .string),
        ])
        let value = Value.integer(Int64(generation))
        try items.loadRows((0..<rows).lazy.map { [.integer(Int64($0 + 1)), value, .string("item \($0) of generation \(generation)")] })
        try items.rows[0].setValue(.string(String(generation)), forKey: "Label")   // a pending change
        _ = try items.addNewRow(values: ["Generation": value, "Label": "new"])  // an added row
        let meta = try DataTable(name: "Meta", fields: [FieldDefinition("Generation", .integer)])
        try meta.loadRows([[value]])
        let briefcase = Briefcase()
        briefcase.addTable(items)
        briefcase.addTable(meta)
        briefcase.properties["Generation"] = String(generation)
        return briefcase
    }
}

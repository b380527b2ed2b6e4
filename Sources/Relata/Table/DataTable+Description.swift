extension DataTable: CustomStringConvertible {
    /// The seeds' format: `<DataTable Clients>` then one line per field, `PK` on key fields.
    ///
    /// ```
    /// <DataTable Clients>
    ///   <FieldDefinition Clients.ClientId AutoInc PK>
    ///   <FieldDefinition Clients.ClientName String(50)>
    /// ```
    public var description: String {
        var lines = ["<DataTable \(name)>"]
        for field in fields {
            var parts = ["<FieldDefinition \(name).\(field.name)", field.typeDescription]
            if field.primaryKey { parts.append("PK") }
            if field.required && !field.primaryKey { parts.append("required") }
            if field.readOnly { parts.append("read-only") }
            lines.append("  " + parts.joined(separator: " ") + ">")
        }
        for field in calculatedFields { lines.append("  <CalculatedField \(name).\(field.name) \(field.type.displayName)>") }
        for field in lookupFields {
            lines.append("  <LookupField \(name).\(field.name) \(fields[field.sourceField].name) → \(field.lookupTable.name).\(field.keyIndex.field.name) → \(field.lookupTable.fields[field.resultField].name)>")
        }
        return lines.joined(separator: "\n")
    }
}

extension DataType {
    /// The type's name as the original system writes it (`AutoInc`, `WideString`, …).
    public var displayName: String {
        rawValue.prefix(1).uppercased() + rawValue.dropFirst()
    }
}

extension FieldDefinition {
    var typeDescription: String {
        if size > 0 { return "\(type.displayName)(\(size))" }
        if precision > 0 { return "\(type.displayName)(\(precision),\(scale))" }
        return type.displayName
    }
}

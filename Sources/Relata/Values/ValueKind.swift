/// The kind of value an expression gives, known before it runs: NULL, or the storage of a
/// field type. What the query planners decide by (which conditions cannot fail, what a
/// database compares as Relata does).
package enum ValueKind: Hashable, Sendable {
    case null
    case value(DataType.Storage)

    /// The kind of a value.
    package init(_ value: Value) {
        switch value {
        case .null: self = .null
        case .integer: self = .value(.integer)
        case .double: self = .value(.double)
        case .decimal: self = .value(.decimal)
        case .boolean: self = .value(.boolean)
        case .string: self = .value(.string)
        case .date: self = .value(.date)
        case .guid: self = .value(.guid)
        case .blob: self = .value(.blob)
        }
    }
}

import Foundation

/// The rows of a query as it is built: for each row, one slot of each of its tables
/// (-1 where a `LEFT JOIN` found no row). Values are read from the tables on demand, so
/// a join copies slot numbers, never values.
final class QueryRows {
    /// The tables, in the order of `FROM` and the joins, and what the query calls each.
    let tables: [DataTable]
    let names: [String]
    /// `slots[source][row]`.
    private(set) var slots: [[Int]]

    init(tables: [DataTable], names: [String], slots: [[Int]]) {
        self.tables = tables
        self.names = names
        self.slots = slots
    }

    var count: Int { slots.first?.count ?? 0 }

    /// The source a name calls, case-insensitively.
    func source(named name: String) -> Int? {
        names.firstIndex { $0.equalsIgnoringCase(name) }
    }

    /// The rows kept, in their order.
    func keeping(_ rows: [Int]) -> QueryRows {
        QueryRows(tables: tables, names: names, slots: slots.map { column in rows.map { column[$0] } })
    }
}

/// A value as a key of grouping, `DISTINCT`, `IN` and hash joins: values that compare equal
/// are the same key (`1`, `1.0` and `1.00` are one number).
enum QueryKey {
    static func of(_ value: Value) -> Value {
        switch value {
        case .double(let double) where double.rounded() == double && abs(double) < 9.0e18:
            return .integer(Int64(double))
        case .decimal(let decimal):
            let double = NSDecimalNumber(decimal: decimal).doubleValue
            if double.rounded() == double, abs(double) < 9.0e18, Decimal(Int64(double)) == decimal { return .integer(Int64(double)) }
            return value
        default:
            return value
        }
    }
}

import Foundation

/// The rows of one `rows` frame of a ``RowStream``: ``count`` rows of one value per field,
/// held column by column as the stream carries them — a frame is read, written and loaded
/// into a table without making a ``Value`` per cell.
///
/// ```swift
/// case .rows(let rows):
///     for row in 0..<rows.count { print(rows[row, 0], rows[row, 1]) }
/// ```
public struct RowStreamRows: @unchecked Sendable {
    // @unchecked Sendable: the columns are filled before a value of this type exists (by the
    // reader or by ``RowStreamRowsBuilder/take()``) and never changed after.
    let columns: [Column]
    /// How many rows.
    public let count: Int

    init(columns: [Column], count: Int) {
        self.columns = columns
        self.count = count
    }

    /// How many values each row has (the table's fields, in order).
    public var fieldCount: Int { columns.count }

    /// The value of a field in a row; both count from 0.
    public subscript(row: Int, field: Int) -> Value {
        precondition((0..<count).contains(row) && columns.indices.contains(field), "row \(row), field \(field) is outside the batch")
        return columns[field].value(at: row)
    }

    /// A row's values, one per field.
    public func values(ofRow row: Int) -> [Value] {
        columns.indices.map { self[row, $0] }
    }

    /// Every value, row after row: `count × fieldCount` values.
    public var values: [Value] {
        var values: [Value] = []
        values.reserveCapacity(count * columns.count)
        for row in 0..<count {
            for column in columns { values.append(column.value(at: row)) }
        }
        return values
    }
}

/// Gathers rows into a ``RowStreamRows``, a value at a time, each straight into its field's
/// column: call one `append` per field of a row, in field order, then ``endRow()``.
///
/// ```swift
/// var builder = RowStreamRowsBuilder(fields: fields)
/// builder.append(integer: 7, field: 0)
/// builder.append(.string("Initech"), field: 1)
/// builder.endRow()
/// let rows = builder.take()
/// ```
package struct RowStreamRowsBuilder {
    package let fields: [FieldDefinition]
    private var columns: [Column]
    /// Rows ended since the last ``take()``.
    package private(set) var count = 0
    /// About how many bytes the rows take in a frame (eight per number, a string's UTF-8 and its length).
    package private(set) var bytes = 0

    package init(fields: [FieldDefinition]) {
        self.fields = fields
        columns = fields.map { Column(for: $0.type) }
    }

    /// Appends a whole row of values already of their fields' types (another type is stored as NULL).
    package mutating func append(row: [Value]) {
        precondition(row.count == columns.count, "a row holds one value per field")
        for (field, value) in row.enumerated() { append(value, field: field) }
        endRow()
    }

    /// A value already of the field's type (another type is stored as NULL).
    package mutating func append(_ value: Value, field: Int) {
        columns[field].append(value)
        switch value {
        case .string(let text): bytes += text.utf8.count + 4
        case .blob(let data): bytes += data.count + 8
        default: bytes += 8
        }
    }

    package mutating func appendNull(field: Int) {
        columns[field].append(.null)
        bytes += 8
    }

    package mutating func append(integer: Int64, field: Int) { append(element: integer, field: field, bytes: 8) }
    package mutating func append(double: Double, field: Int) { append(element: double, field: field, bytes: 8) }
    package mutating func append(boolean: Bool, field: Int) { append(element: boolean, field: field, bytes: 8) }
    package mutating func append(string: String, field: Int) { append(element: string, field: field, bytes: string.utf8.count + 4) }
    package mutating func append(date: Date, field: Int) { append(element: date, field: field, bytes: 8) }

    /// A value straight into its field's column when the column holds its type; else as a ``Value``.
    private mutating func append<Element: ColumnElement>(element: Element, field: Int, bytes size: Int) {
        guard let column = Element.typed(columns[field]) else { return append(element.columnValue, field: field) }
        column.appendElement(element)
        bytes += size
    }

    /// Ends a row: every field got one value.
    package mutating func endRow() {
        count += 1
    }

    /// The rows gathered; the builder starts again, empty.
    package mutating func take() -> RowStreamRows {
        precondition(columns.allSatisfy { $0.count == count }, "a row was ended without a value for every field")
        defer {
            columns = fields.map { Column(for: $0.type) }
            count = 0
            bytes = 0
        }
        return RowStreamRows(columns: columns, count: count)
    }
}

import Foundation

/// A table's rows as they cross the wire: the table's name, its fields, and the rows'
/// values in field order. In JSON each value is plain (``JSONValue``) and read back by
/// its field's type, so decimals keep their digits and dates their precision without a
/// type tag per value.
///
/// ```swift
/// let data = TableData(clients)                      // what a server sends
/// let copy = try DataTable(data)                      // what a client makes of it
/// ```
public struct TableData: Sendable, Hashable, Codable {
    /// The table's name.
    public var name: String
    /// The fields, in the order of each row's values.
    public var fields: [FieldDefinition]
    /// The rows: one value per field.
    public var rows: [[Value]]

    /// Creates table data; every row must have one value per field.
    public init(name: String, fields: [FieldDefinition], rows: [[Value]]) {
        self.name = name
        self.fields = fields
        self.rows = rows
    }

    /// The visible rows of a table (current values), with all its stored fields or those named.
    ///
    /// - Throws: ``RelataError/Code/unknownField`` for a name the table does not have.
    public init(_ table: DataTable, fields names: [String]? = nil) throws {
        let fields = try (names ?? table.fields.map(\.name)).map { name in
            guard let field = table.field(named: name) else { throw table.unknownField(name) }
            return field
        }
        self.init(name: table.name, fields: fields, rows: table.rows.map { row in fields.map { row[$0.name] } })
    }

    private enum CodingKeys: String, CodingKey { case name, fields, rows }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let name = try container.decode(String.self, forKey: .name)
        let fields = try container.decode([FieldDefinition].self, forKey: .fields)
        let raw = try container.decode([[JSONValue]].self, forKey: .rows)
        self.name = name
        self.fields = fields
        self.rows = try raw.enumerated().map { index, values in
            guard values.count == fields.count else {
                throw DecodingError.dataCorruptedError(forKey: .rows, in: container,
                    debugDescription: "row \(index + 1) of \(name) has \(values.count) values for \(fields.count) fields")
            }
            return try zip(fields, values).map { field, value in
                do {
                    return try field.value(fromJSON: value)
                } catch {
                    throw DecodingError.dataCorruptedError(forKey: .rows, in: container,
                        debugDescription: "row \(index + 1) of \(name): \(error)")
                }
            }
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(fields, forKey: .fields)
        try container.encode(rows.map { $0.map(JSONValue.init) }, forKey: .rows)
    }
}

extension DataTable {
    /// A table holding rows that came over the wire, as original (unchanged) rows.
    ///
    /// - Throws: ``RelataError`` when the fields cannot make a table or a row does not fit them.
    public convenience init(_ data: TableData) throws {
        try self.init(name: data.name, fields: data.fields)
        try loadRows(data.rows)
    }
}

/// What a client asks of one table: which fields, which rows (a where expression with
/// parameters), how many at most — or the answer of a DA SQL query.
///
/// ```swift
/// DataRequest(table: "Orders", fields: ["OrderId", "Total"], where: "ClientId = :client", parameters: ["client": 7], maxRecords: 100)
/// DataRequest(table: "Totals", sql: "SELECT ClientId, SUM(Total) AS Total FROM Orders GROUP BY ClientId")
/// ```
public struct DataRequest: Sendable, Hashable, Codable {
    /// The table's name, as the schema publishes it; with ``sql``, the name the answer is given.
    public var table: String
    /// A DA SQL query (`Documentation/DASQL.md`) whose answer is the table; `fields` and
    /// `where` are then left out, and `parameters` bind the query's `:parameters`.
    public var sql: String?
    /// The fields to send; nil for all.
    public var fields: [String]?
    /// A where expression in Relata's expression language; nil for every row.
    public var `where`: String?
    /// The values of the expression's `:parameters`.
    public var parameters: [String: Value]
    /// The most rows to send; nil for no limit.
    public var maxRecords: Int?

    public init(table: String, fields: [String]? = nil, where expression: String? = nil, parameters: [String: Value] = [:],
                maxRecords: Int? = nil) {
        self.table = table
        self.sql = nil
        self.fields = fields
        self.where = expression
        self.parameters = parameters
        self.maxRecords = maxRecords
    }

    /// Whether the answer is the table itself — every field, no query — which a client's table
    /// of that name can take.
    public var isWholeTable: Bool { fields == nil && sql == nil }

    /// A request for the answer of a DA SQL query, as a table called `table`.
    public init(table: String = "Query", sql: String, parameters: [String: Value] = [:], maxRecords: Int? = nil) {
        self.init(table: table, parameters: parameters, maxRecords: maxRecords)
        self.sql = sql
    }

    private enum CodingKeys: String, CodingKey {
        case table, sql, fields, `where`, parameters, maxRecords
    }

    /// Reads a request; `parameters` may be left out when there are none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        table = try container.decode(String.self, forKey: .table)
        sql = try container.decodeIfPresent(String.self, forKey: .sql)
        fields = try container.decodeIfPresent([String].self, forKey: .fields)
        self.where = try container.decodeIfPresent(String.self, forKey: .where)
        parameters = try container.decodeIfPresent([String: Value].self, forKey: .parameters) ?? [:]
        maxRecords = try container.decodeIfPresent(Int.self, forKey: .maxRecords)
    }
}

/// A parsed DA SQL query: one `SELECT` over a schema's table and field names.
///
/// DA SQL lets a client ask for exactly the rows and columns it needs without sending SQL
/// a database would run: the text is parsed here, checked against what the schema
/// publishes, and only then compiled for a database (or run over in-memory tables).
/// The grammar is in `Documentation/DASQL.md`.
///
/// ```swift
/// let query = try DASQLQuery("""
///     SELECT c.ClientName, COUNT(*) AS Orders
///     FROM Clients c JOIN Orders o ON o.ClientId = c.ClientId
///     WHERE o.OrderDate >= :since
///     GROUP BY c.ClientName
///     """)
/// query.parameterNames   // ["since"]
/// ```
///
/// A syntax error is a ``RelataError`` with code ``RelataError/Code/querySyntax`` whose
/// ``RelataError/location`` gives the line and column (`line 3, column 12`).
public struct DASQLQuery: Sendable, Hashable, CustomStringConvertible {
    /// The text the query was parsed from.
    public let text: String
    package let statement: SelectStatement

    /// Parses a query.
    ///
    /// - Throws: ``RelataError/Code/querySyntax`` with the line and column of the problem.
    public init(_ text: String) throws {
        self.text = text
        var parser = ExpressionParser(text: text, grammar: .query)
        statement = try parser.parseQuery()
    }

    public var description: String { text }

    /// The names of the `:parameters` the query uses (in subqueries too).
    public var parameterNames: Set<String> { statement.parameterNames }

    /// The schema tables the query reads (in joins and subqueries too), each once, in the order written.
    public var tableNames: [String] {
        var seen = Set<String>()
        return statement.tableNames.filter { seen.insert($0.lowercased()).inserted }
    }
}

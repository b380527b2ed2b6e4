/// The error every Relata operation throws.
///
/// A `RelataError` has a stable ``code`` to match on, a human-readable
/// ``message``, and the context that locates the problem: the table, field and
/// row, or the position in an expression or in an imported file.
///
/// ```swift
/// do {
///     try row.setValue("far too long a name", forKey: "ClientCode")
/// } catch let error as RelataError where error.code == .valueTooLong {
///     print(error)   // Clients.ClientCode, row 3 (ClientId=3): value is 19 characters, the field allows 8
/// }
/// ```
public struct RelataError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable identifier of the kind of error. New codes may be added in later versions.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A field name that the table does not have.
        public static let unknownField = Code("unknownField")
        /// A table name that is not known.
        public static let unknownTable = Code("unknownTable")
        /// A value of the wrong type for its field.
        public static let typeMismatch = Code("typeMismatch")
        /// A number outside its field's range, precision or scale.
        public static let valueOutOfRange = Code("valueOutOfRange")
        /// A string or blob longer than its field's size.
        public static let valueTooLong = Code("valueTooLong")
        /// NULL in a required field.
        public static let requiredValueMissing = Code("requiredValueMissing")
        /// A write to a read-only, auto-increment, calculated or lookup field.
        public static let readOnlyField = Code("readOnlyField")
        /// A write to a row that is locked while its changes are in flight.
        public static let rowLocked = Code("rowLocked")
        /// An operation that the row's state does not allow (editing a deleted row, posting outside edit mode, …).
        public static let invalidRowState = Code("invalidRowState")
        /// A primary key used twice or left NULL, or a foreign key without its parent row
        /// (or a parent row deleted while rows still refer to it).
        public static let constraintViolation = Code("constraintViolation")
        /// A key that no row of the table has.
        public static let rowNotFound = Code("rowNotFound")
        /// A row that does not belong to the table it was passed to.
        public static let foreignRow = Code("foreignRow")
        /// A field definition list that cannot make a table (duplicate names, …).
        public static let invalidDefinition = Code("invalidDefinition")
        /// An expression that does not parse.
        public static let expressionSyntax = Code("expressionSyntax")
        /// A DA SQL query that does not parse; the location gives its line and column.
        public static let querySyntax = Code("querySyntax")
        /// An expression that parses but cannot be evaluated (unknown function, missing parameter, bad operand).
        public static let expressionEvaluation = Code("expressionEvaluation")
        /// `applyChanges` called while an apply of the same adapter is running (from a rule).
        public static let applyInProgress = Code("applyInProgress")
        /// A command the schema does not declare.
        public static let unknownCommand = Code("unknownCommand")
        /// The session's roles do not allow the operation on the table.
        public static let permissionDenied = Code("permissionDenied")
        /// An argument outside what the call accepts (a pool of no runtimes, …).
        public static let invalidArgument = Code("invalidArgument")
        /// A processed delta that does not match the table.
        public static let invalidDelta = Code("invalidDelta")
        /// CSV or JSON input that cannot be imported.
        public static let invalidImport = Code("invalidImport")
        /// A calculated field's function threw.
        public static let calculationFailed = Code("calculationFailed")
        /// A schema file (or an edits or test file) that cannot be read or does not describe valid tables.
        public static let invalidSchema = Code("invalidSchema")
        /// A briefcase file that is damaged, is not a briefcase, or comes from a newer format version.
        public static let invalidBriefcase = Code("invalidBriefcase")
        /// A query ran longer than the data server allows and was stopped.
        public static let timeLimitExceeded = Code("timeLimitExceeded")
        /// An answer from a data server that cannot be read (damaged, cut short, or of another protocol version).
        public static let invalidResponse = Code("invalidResponse")
        /// A file that could not be read or written (the message carries the system's reason).
        public static let fileFailed = Code("fileFailed")
        /// A row that cannot be decoded into the requested Swift type.
        public static let decodingFailed = Code("decodingFailed")
        /// Changes validated with rules the data server no longer has: download them, validate again, resend.
        public static let staleRules = Code("staleRules")
        /// An apply id sent again with other changes than the first time (``ApplyId``).
        public static let applyIdReused = Code("applyIdReused")
        /// An apply id older than the data server keeps ids: it cannot tell whether it applied the changes.
        public static let applyIdExpired = Code("applyIdExpired")
    }

    /// What kind of error this is.
    public let code: Code
    /// What went wrong and, where possible, how to fix it.
    public let message: String
    /// The table involved, if any.
    public var table: String?
    /// The field involved, if any.
    public var field: String?
    /// The row involved, described by its primary key or position (`row 3 (ClientId=3)`).
    public var row: String?
    /// Where in the input the problem is (`column 12` of an expression, `line 4` of a CSV file).
    public var location: String?

    /// Creates an error; Relata's own errors always fill in the context they know.
    ///
    /// ```swift
    /// throw RelataError(.requiredValueMissing, "a client needs a name", table: "Clients", field: "ClientName")
    /// ```
    public init(_ code: Code, _ message: String, table: String? = nil, field: String? = nil,
                row: String? = nil, location: String? = nil) {
        self.code = code
        self.message = message
        self.table = table
        self.field = field
        self.row = row
        self.location = location
    }

    /// `Table.Field, row N (Key=…), location: message`.
    public var description: String {
        var subject = ""
        switch (table, field) {
        case let (table?, field?): subject = "\(table).\(field)"
        case let (table?, nil): subject = table
        case let (nil, field?): subject = field
        case (nil, nil): break
        }
        let parts = [subject.isEmpty ? nil : subject, row, location].compactMap { $0 }
        return parts.isEmpty ? message : parts.joined(separator: ", ") + ": " + message
    }
}

extension RelataError.Code {
    /// Lets `catch RelataError.Code.unknownField` match a ``RelataError`` with that code.
    public static func ~= (code: Self, error: any Error) -> Bool {
        (error as? RelataError)?.code == code
    }
}

extension RelataError {
    /// The refusal of an operation (`read`, `insert`, `update`, `delete`) that a session's roles
    /// do not allow on a table: the same words from a data server and from a client that refuses
    /// before it sends.
    ///
    /// `allowedRoles`, when known, are the roles that may: the message names them, so the user
    /// knows whom to ask.
    ///
    /// ```swift
    /// throw RelataError.permissionDenied("delete", on: "Clients", roles: ["Clerk"], allowedRoles: ["Manager"])
    /// // delete on Clients is not allowed for roles [Clerk]; roles that may: [Manager]
    /// ```
    public static func permissionDenied(_ operation: String, on table: String, roles: [String], allowedRoles: [String]? = nil) -> RelataError {
        let may = allowedRoles.map { $0.isEmpty ? "; no role may" : "; roles that may: [\($0.joined(separator: ", "))]" } ?? ""
        return RelataError(.permissionDenied, "\(operation) on \(table) is not allowed for roles [\(roles.joined(separator: ", "))]\(may)", table: table)
    }
}

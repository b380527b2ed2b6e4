import Relata

/// Who may do what to a schema's tables: for each table (or `*`, every table not
/// listed), the roles allowed to read, insert, update and delete. Rules run with the
/// server's authority: `lda` inside them is not checked.
///
/// ```json
/// {"Clients": {"read": ["Sales", "Clerk"], "insert": ["Sales"], "update": ["Sales"], "delete": ["Manager"]},
///  "*": {"read": ["Sales", "Clerk"]}}
/// ```
/// An operation a table's entry leaves out is denied; so is every operation on a table
/// that has no entry when there is no `*`. ``allowAll`` lets every logged-in user do everything.
public struct TablePermissions: Sendable, Hashable, Codable {
    /// What a request does to a table.
    public enum Operation: String, Sendable, Hashable, Codable, CaseIterable {
        case read, insert, update, delete
    }

    /// Roles by operation, by table name (lower case; `*` for the rest); nil allows everything.
    private let entries: [String: [String: [String]]]?
    /// The table names as the configuration spells them, by lower case.
    private let spelled: [String: String]

    /// Every logged-in user may do everything.
    public static let allowAll = TablePermissions(entries: nil)

    /// Permissions by table name, then operation name (`read`, `insert`, `update`, `delete`).
    ///
    /// - Throws: ``RelataError/Code/invalidArgument`` naming an unknown operation.
    public init(_ entries: [String: [String: [String]]]) throws {
        for (table, operations) in entries {
            for name in operations.keys where Operation(rawValue: name) == nil {
                throw RelataError(.invalidArgument, "permissions of \(table): unknown operation '\(name)' (operations: read, insert, update, delete)")
            }
        }
        self.init(entries: Dictionary(entries.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first }),
                  spelled: Dictionary(entries.keys.map { ($0.lowercased(), $0) }, uniquingKeysWith: { first, _ in first }))
    }

    private init(entries: [String: [String: [String]]]?, spelled: [String: String] = [:]) {
        self.entries = entries
        self.spelled = spelled
    }

    public init(from decoder: any Decoder) throws {
        try self.init(decoder.singleValueContainer().decode([String: [String: [String]]].self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(entries ?? ["*": Dictionary(uniqueKeysWithValues: Operation.allCases.map { ($0.rawValue, ["*"]) })])
    }

    /// True for ``allowAll``: no permissions were given.
    public var allowsEveryone: Bool { entries == nil }

    /// Whether an entry names the table itself (not only `*`).
    public func names(table: String) -> Bool {
        entries?[table.lowercased()] != nil
    }

    /// Checks every name against what it names: a table of `tables` (or `*`), and a role of
    /// `roles` (or `*`) — a misspelt table or role would quietly close a door, or leave one open.
    ///
    /// - Throws: ``RelataError/Code/invalidArgument`` naming the unknown name, the known ones and
    ///   the closest of them (did you mean).
    public func checkNames(tables: [String], roles: Set<String>) throws {
        guard let entries else { return }
        for key in entries.keys.sorted() where key != "*" && !tables.contains(where: { $0.lowercased() == key }) {
            let name = spelled[key] ?? key
            let suggestion = Spelling.closest(to: name, among: tables).map { " (did you mean \($0)?)" } ?? ""
            throw RelataError(.invalidArgument, "permissions name the table '\(name)', which the schema does not have\(suggestion); its tables: \(tables.joined(separator: ", "))",
                              table: name)
        }
        for (key, operations) in entries.sorted(by: { $0.key < $1.key }) {
            for (operation, allowed) in operations.sorted(by: { $0.key < $1.key }) {
                for role in allowed where role != "*" && !roles.contains(role) {
                    throw RoleNames.unknown(role, namedBy: "permissions of \(spelled[key] ?? key) give \(operation) to", known: roles, table: spelled[key] ?? key)
                }
            }
        }
    }

    /// Whether a session may do an operation on a table (a role `*` stands for every session).
    public func allows(_ operation: Operation, on table: String, for session: Session) -> Bool {
        guard entries != nil else { return true }
        let roles = rolesAllowed(operation, on: table)
        return roles.contains("*") || roles.contains { session.roles.contains($0) }
    }

    /// The roles that may do an operation on a table, as the configuration lists them (`*` for
    /// every session); empty when no role may.
    public func rolesAllowed(_ operation: Operation, on table: String) -> [String] {
        guard let entries else { return ["*"] }
        return (entries[table.lowercased()] ?? entries["*"])?[operation.rawValue] ?? []
    }

    /// Throws ``RelataError/Code/permissionDenied`` naming the table, the operation and the roles
    /// that may, unless allowed.
    public func check(_ operation: Operation, on table: String, for session: Session) throws {
        guard allows(operation, on: table, for: session) else { throw refusal(operation, on: table, for: session) }
    }

    /// The refusal of an operation a session may not make (see ``check(_:on:for:)``).
    public func refusal(_ operation: Operation, on table: String, for session: Session) -> RelataError {
        RelataError.permissionDenied(operation.rawValue, on: table, roles: session.roles, allowedRoles: rolesAllowed(operation, on: table))
    }

    /// The operations a session may make on each of a schema's tables, by table name (GetSchema
    /// sends them, so a client refuses what the server would, before it sends it).
    public func allowedOperations(of schema: SchemaDefinition, for session: Session) -> [String: [String]] {
        Dictionary(schema.tables.map { table in
            (table.name, Operation.allCases.filter { allows($0, on: table.name, for: session) }.map(\.rawValue))
        }, uniquingKeysWith: { first, _ in first })
    }

    /// For each operation a session may not make on a schema's tables, the roles that may, by
    /// table name (GetSchema sends them, so a client's refusal names them as the server's does).
    public func rolesAllowedForRefusedOperations(of schema: SchemaDefinition, for session: Session) -> [String: [String: [String]]] {
        var refused: [String: [String: [String]]] = [:]
        for table in schema.tables {
            for operation in Operation.allCases where !allows(operation, on: table.name, for: session) {
                refused[table.name, default: [:]][operation.rawValue] = rolesAllowed(operation, on: table.name)
            }
        }
        return refused
    }
}

import Relata

/// Users kept in a table of a schema: a user-name field, a field with the bcrypt hash of
/// the password, optionally a field of comma-separated roles, and fields whose values
/// become session values.
///
/// ```swift
/// let users = try TableUsers(storage: storage, table: "Users", userField: "UserName", passwordField: "PasswordHash",
///                            rolesField: "Roles", valueFields: ["UserId"])
/// ```
public struct TableUsers: LoginProvider {
    let storage: SQLStorage
    /// The table, as the schema names it.
    public let table: String
    let userField: FieldDefinition
    let passwordField: FieldDefinition
    let rolesField: FieldDefinition?
    let valueFields: [FieldDefinition]

    /// - Throws: ``RelataError`` naming a table or field the schema does not have.
    public init(storage: SQLStorage, table: String, userField: String, passwordField: String,
                rolesField: String? = nil, valueFields: [String] = []) throws {
        let definition = try storage.definition(of: table)
        func field(_ name: String) throws -> FieldDefinition {
            guard let field = definition.fields.first(where: { $0.name.equalsIgnoringCase(name) }) else {
                throw RelataError(.unknownField, "the login table has no field '\(name)'", table: definition.name, field: name)
            }
            return field
        }
        self.storage = storage
        self.table = definition.name
        self.userField = try field(userField)
        self.passwordField = try field(passwordField)
        self.rolesField = try rolesField.map(field)
        self.valueFields = try valueFields.map(field)
    }

    public func account(named user: String) throws -> LoginAccount? {
        let fields = [passwordField] + [rolesField].compactMap { $0 } + valueFields
        let columns = fields.map { storage.sqlColumn($0.name, of: table) }.joined(separator: ", ")
        let sql = "SELECT \(columns) FROM \(storage.sqlTable(table)) WHERE \(storage.sqlColumn(userField.name, of: table)) = \(storage.dialect.placeholder(1))"
        let row = try storage.read { connection in try connection.rows(sql, [.string(user)], reading: fields).first }
        guard let row, let hash = row[0].stringValue else { return nil }
        var roles: [String] = []
        if rolesField != nil, let text = row[1].stringValue {
            roles = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        var values: [String: Value] = ["User": .string(user)]
        let first = rolesField == nil ? 1 : 2
        for (offset, field) in valueFields.enumerated() {
            values[field.name] = row[first + offset]
        }
        return LoginAccount(passwordHash: hash, session: Session(values: values, roles: roles))
    }

    /// The roles the table's users have now (none without a roles field): what `permissions`
    /// may name besides the static users' and the declared roles.
    public func rolesInUse() throws -> Set<String> {
        guard let rolesField else { return [] }
        let sql = "SELECT DISTINCT \(storage.sqlColumn(rolesField.name, of: table)) FROM \(storage.sqlTable(table))"
        let rows = try storage.read { connection in try connection.rows(sql, [], reading: [rolesField]) }
        return Set(rows.compactMap { $0[0].stringValue }.flatMap { text in
            text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        })
    }
}

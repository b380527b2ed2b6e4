import Relata

/// A login table's secrets (see ``TableUsers``): its password field is never read through the
/// protocol — not by GetData, DA SQL, a where expression, a lookup, a caller's `lda` read, nor in
/// an apply's answer — by anyone; it and the roles field are written only by the roles in
/// ``writers`` (none by default), so a user can never raise his own roles or take another's password.
///
/// ```swift
/// let service = try DataService(storage: storage, loginTable: LoginTableFields(table: "Users", passwordField: "PasswordHash",
///                                                                             rolesField: "Roles", writers: ["Admin"]))
/// ```
public struct LoginTableFields: Sendable, Hashable {
    public var table: String
    public var passwordField: String
    public var rolesField: String?
    /// Roles that may set the password and roles fields.
    public var writers: [String]

    public init(table: String, passwordField: String, rolesField: String? = nil, writers: [String] = []) {
        self.table = table
        self.passwordField = passwordField
        self.rolesField = rolesField
        self.writers = writers
    }

    func isTable(_ name: String) -> Bool { name.equalsIgnoringCase(table) }

    func isPassword(_ field: String, of table: String) -> Bool {
        isTable(table) && field.equalsIgnoringCase(passwordField)
    }

    /// The fields only ``writers`` may set.
    func isGuarded(_ field: String, of table: String) -> Bool {
        isTable(table) && (field.equalsIgnoringCase(passwordField)
            || rolesField.map { field.equalsIgnoringCase($0) } == true)
    }

    /// The refusal of a read that names the password field.
    func passwordRefusal(_ what: String) -> RelataError {
        RelataError(.permissionDenied, "\(what) names \(table).\(passwordField), which holds passwords: it is never sent", table: table, field: passwordField)
    }

    /// The deltas without the password field: a client never has it, so its values (a NULL it never
    /// read) are not compared or written — unless an edit of a writer sets it.
    func strippingPassword(from deltas: [Delta]) -> [Delta] {
        deltas.map { delta in
            guard isTable(delta.tableName) else { return delta }
            var delta = delta
            for index in delta.changes.indices {
                let change = delta.changes[index]
                let setsPassword = change.edits.map { edits in edits.contains { $0.values.keys.contains { isPassword($0, of: table) } } }
                    ?? change.newValues.contains { isPassword($0.key, of: table) && !$0.value.isNull }
                delta.changes[index].oldValues = withoutPassword(change.oldValues)
                delta.changes[index].refreshedValues = withoutPassword(change.refreshedValues)
                if !setsPassword { delta.changes[index].newValues = withoutPassword(change.newValues) }
            }
            return delta
        }
    }

    /// The answer without the password field anywhere: not even its hash leaves the server.
    func hidingPassword(in deltas: [Delta]) -> [Delta] {
        deltas.map { delta in
            guard isTable(delta.tableName) else { return delta }
            var delta = delta
            for index in delta.changes.indices {
                delta.changes[index].oldValues = withoutPassword(delta.changes[index].oldValues)
                delta.changes[index].newValues = withoutPassword(delta.changes[index].newValues)
                delta.changes[index].refreshedValues = withoutPassword(delta.changes[index].refreshedValues)
                delta.changes[index].edits = delta.changes[index].edits?.map { edit in
                    RowEdit(sequence: edit.sequence, kind: edit.kind, values: withoutPassword(edit.values))
                }
            }
            return delta
        }
    }

    /// A row's values of the login table, the password left out.
    private func withoutPassword(_ values: FieldValues) -> FieldValues {
        values.filter { !isPassword($0.key, of: table) }
    }

    /// Refuses, for a session without a writer role, a change that sets the password or roles field.
    func checkWrites(of deltas: [Delta], by session: Session) throws {
        guard !writers.contains(where: session.roles.contains) else { return }
        for delta in deltas where isTable(delta.tableName) {
            for change in delta.changes where change.type != .delete {
                let set: [String] = change.edits.map { edits in edits.flatMap { $0.values.keys } }
                    ?? change.newValues.filter { change.type == .insert ? !$0.value.isNull : change.oldValues[$0.key] != $0.value }.map(\.key)
                if let field = set.first(where: { isGuarded($0, of: delta.tableName) }) {
                    throw RelataError(.permissionDenied, "writing \(table).\(field) is not allowed for roles [\(session.roles.joined(separator: ", "))]"
                                      + (writers.isEmpty ? "; no role may write it through the protocol" : "; it is for roles \(writers.joined(separator: ", "))"),
                                      table: table, field: field)
                }
            }
        }
    }
}

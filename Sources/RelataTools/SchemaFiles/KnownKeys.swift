import Foundation
import Relata
import RelataScript

/// The keys a JSON file of Relata's may use, level by level, so a misspelt key
/// (`"scirpt"`) is an error with a suggestion instead of being silently ignored.
indirect enum KnownKeys: Sendable {
    /// An object with these keys; each key's value has its own shape.
    case object([String: KnownKeys])
    /// An array whose elements have this shape.
    case array(KnownKeys)
    /// Any value (field values, whose names are checked against the table later).
    case any

    /// The first unknown key in `value`, as `tables[0].scirpt: unknown key 'scirpt' (did you mean 'script'?)`.
    func firstUnknownKey(in value: JSONValue, path: String = "") -> String? {
        switch (self, value) {
        case (.object(let known), .object(let members)):
            for key in members.keys.sorted() {
                let here = path.isEmpty ? key : "\(path).\(key)"
                guard let shape = known[key] else {
                    let suggestion = Spelling.closest(to: key, among: Array(known.keys)).map { " (did you mean '\($0)'?)" } ?? ""
                    return "\(here): unknown key '\(key)'\(suggestion); known keys: \(known.keys.sorted().joined(separator: ", "))"
                }
                if let inner = members[key], let found = shape.firstUnknownKey(in: inner, path: here) { return found }
            }
            return nil
        case (.array(let element), .array(let elements)):
            for (index, item) in elements.enumerated() {
                if let found = element.firstUnknownKey(in: item, path: "\(path)[\(index)]") { return found }
            }
            return nil
        default:
            return nil
        }
    }

    /// A schema file (`Documentation/Schema.md`).
    static let schema: KnownKeys = .object([
        "name": .any, "description": .any, "script": .any, "serverScript": .any, "updateOrder": .any, "tests": .any,
        "session": .object(["user": .any, "roles": .any, "values": .any]),
        "commands": .array(.object(["name": .any, "function": .any, "enabled": .any, "roles": .any])),
        "tables": .array(.object([
            "name": .any, "data": .any, "script": .any, "serverScript": .any, "updateRule": .any, "storedName": .any, "columns": .any,
            "fields": .array(field),
            "foreignKeys": .array(.object(["field": .any, "references": .any, "referencedField": .any])),
            "lookupFields": .array(.object(["name": .any, "sourceField": .any, "lookupTable": .any, "lookupKeyField": .any,
                                            "lookupResultField": .any])),
            "calculatedFields": .array(.object(["name": .any, "type": .any, "function": .any, "cached": .any])),
        ])),
    ])

    /// A field definition, as ``FieldDefinition`` decodes it.
    static let field: KnownKeys = .object(Dictionary(uniqueKeysWithValues: FieldDefinition.codingKeyNames.map { ($0, KnownKeys.any) }))

    /// A users file, or a domain's `users` (`Documentation/Server.md`).
    static let users: KnownKeys = .array(.object(["name": .any, "passwordHash": .any, "roles": .any, "values": .any]))

    /// A server configuration file (`relata serve --config`).
    static let serverConfig: KnownKeys = .object([
        "host": .any, "port": .any, "sessions": .any, "cors": .object(["allowOrigins": .any]),
        "console": .object(["adminRoles": .any]),
        "domains": .array(.object([
            "name": .any, "database": .any, "users": users, "usersFile": .any, "roles": .any,
            "loginTable": .object(["schema": .any, "table": .any, "userField": .any, "passwordField": .any, "rolesField": .any, "valueFields": .any, "writers": .any]),
            "schemas": .array(.object(["schema": .any, "database": .any, "permissions": .any])),
        ])),
    ])

    /// An edits file (`relata run --edits`).
    static let edits: KnownKeys = .array(.object(["insert": .any, "update": .any, "delete": .any, "key": .any, "values": .any,
                                                  "as": .any]))
}

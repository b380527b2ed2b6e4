import Foundation
import Relata

/// The OpenAPI 3.0 document of protocol v2, as the server serves it at `GET /openapi.json`
/// (`Documentation/Protocol.md` is its prose). Built from the served schemas, so the
/// `DataService.<Schema>` paths and the table names are the ones this server has.
enum OpenAPIDocument {
    static func make(for services: ServerServices) -> [String: Any] {
        var paths: [String: Any] = [
            "/health": ["get": operation("Health", "Whether the server is up, and its protocol version", body: nil, answer: ref("Health"), secured: false)],
            "/health/live": ["get": operation("Liveness", "Whether the process answers (as /health)", body: nil, answer: ref("Health"), secured: false, statuses: [])],
            "/health/ready": ["get": ["operationId": "Readiness", "summary": "Whether every database answers and every schema's rules are loaded",
                                      "responses": ["200": ["description": "Ready", "content": ["application/json": ["schema": ref("Readiness")]]],
                                                    "503": ["description": "Not ready; the checks say what is not",
                                                            "content": ["application/json": ["schema": ref("Readiness")]]]]]],
            "/metrics": ["get": ["operationId": "Metrics", "summary": "The server's metrics in Prometheus's text format",
                                 "responses": ["200": ["description": "OK", "content": ["text/plain": ["schema": ["type": "string"]]]]]]],
            "/v2/LoginService/Login": ["post": operation("Login", "Log in with a login string; the answer's token goes in `Authorization: Bearer …`",
                                                         body: ref("LoginRequest"), answer: ref("LoginAnswer"), secured: false,
                                                         statuses: ["400", "401", "403", "404", "413", "429"])],
            "/v2/LoginService/Logout": ["post": operation("Logout", "End the session of the Authorization header", body: ref("Empty"), answer: ref("Empty"),
                                                          secured: false, statuses: ["400", "413"])],
            "/v2/AdminService/Overview": ["post": operation("AdminService_Overview",
                                                            "For a session with one of the server's admin roles (console.adminRoles): health, the domain's sessions, its recent refusals",
                                                            body: ref("Empty"), answer: ref("AdminOverview"), statuses: ["400", "401", "403", "404", "413"])],
        ]
        var serviceNames = ["DataService"]
        for domain in services.domains {
            serviceNames += domain.dataServices.values.map { "DataService.\($0.storage.schema.name)" }.sorted()
        }
        for service in Set(serviceNames).sorted() {
            let tag = service.replacingOccurrences(of: ".", with: "_")
            paths["/v2/\(service)/GetSchema"] = ["post": operation("\(tag)_GetSchema", "The schema with its rule scripts and version",
                                                                   body: ref("Empty"), answer: ref("SchemaAnswer"))]
            paths["/v2/\(service)/GetData"] = ["post": operation("\(tag)_GetData", "Read tables: fields, a where expression with parameters, a row limit",
                                                                 body: ref("GetDataRequest"), answer: ref("GetDataAnswer"),
                                                                 alsoAnswers: [RowStream.contentType: ["schema": ["type": "string", "format": "binary"]]])]
            paths["/v2/\(service)/UpdateData"] = ["post": operation("\(tag)_UpdateData", "Apply deltas; the answer is the processed deltas",
                                                                    body: ref("UpdateDataMessage"), answer: ref("UpdateDataMessage"),
                                                                    statuses: ["400", "401", "403", "404", "409", "413", "500"],
                                                                    alsoAnswers: [DeltaBinary.contentType: ["schema": ["type": "string", "format": "binary"]]],
                                                                    alsoAccepts: [DeltaBinary.contentType: ["schema": ["type": "string", "format": "binary"]]],
                                                                    parameters: [["name": "X-Relata-Rules-Version", "in": "header", "required": false,
                                                                                  "description": "The rules version the changes were validated with; 409 staleRules when the server's differs",
                                                                                  "schema": ["type": "string"]],
                                                                                 ["name": "Prefer", "in": "header", "required": false,
                                                                                  "description": "return=minimal (RFC 7240): each change is answered without its old and new values (empty objects) and edits, which the client sent; the answer then carries Preference-Applied: return=minimal",
                                                                                  "schema": ["type": "string"]]])]
            paths["/v2/\(service)/ExecuteCommand"] = ["post": operation("\(tag)_ExecuteCommand", "Run a command the schema declares",
                                                                      body: ref("CommandRequest"), answer: ref("CommandAnswer"))]
            paths["/v2/\(service)/SQLGetData"] = ["post": operation("\(tag)_SQLGetData", "Read the answer of a DA SQL query (Documentation/DASQL.md) as a table",
                                                                  body: ref("SQLGetDataRequest"), answer: ref("GetDataAnswer"),
                                                                  alsoAnswers: [RowStream.contentType: ["schema": ["type": "string", "format": "binary"]]])]
        }
        return [
            "openapi": "3.0.3",
            "info": ["title": "Relata data server", "version": "v\(RelataHTTPServer.protocolVersion)",
                     "description": "Protocol v\(RelataHTTPServer.protocolVersion) of a Relata data server: JSON over HTTP (Documentation/Protocol.md)."],
            "paths": paths,
            "components": ["schemas": schemas, "securitySchemes": ["bearer": ["type": "http", "scheme": "bearer"]]],
        ]
    }

    private static func ref(_ name: String) -> [String: Any] { ["$ref": "#/components/schemas/\(name)"] }

    private static func operation(_ id: String, _ summary: String, body: [String: Any]?, answer: [String: Any]?, secured: Bool = true,
                                  statuses: [String] = ["400", "401", "403", "404", "413", "500"],
                                  alsoAnswers: [String: Any] = [:], alsoAccepts: [String: Any] = [:],
                                  parameters: [[String: Any]] = []) -> [String: Any] {
        var responses: [String: Any] = [:]
        if let answer {
            responses["200"] = ["description": "OK", "content": alsoAnswers.merging(["application/json": ["schema": answer]]) { $1 }]
        }
        for status in statuses {
            responses[status] = ["description": "Refused; the body says why", "content": ["application/json": ["schema": ref("Error")]]]
        }
        var operation: [String: Any] = ["operationId": id, "summary": summary, "responses": responses]
        if !parameters.isEmpty { operation["parameters"] = parameters }
        if let body {
            operation["requestBody"] = ["required": true, "content": alsoAccepts.merging(["application/json": ["schema": body]]) { $1 }]
        }
        if secured { operation["security"] = [["bearer": [String]()]] }
        return operation
    }

    /// A field value in the tagged form: `null`, or an object with exactly one of the type keys.
    private static var value: [String: Any] { [
        "nullable": true,
        "anyOf": [
            ["type": "object", "required": ["integer"], "properties": ["integer": ["type": "integer"]]],
            ["type": "object", "required": ["double"], "properties": ["double": ["type": "number"]]],
            ["type": "object", "required": ["decimal"], "properties": ["decimal": ["type": "string"]]],
            ["type": "object", "required": ["boolean"], "properties": ["boolean": ["type": "boolean"]]],
            ["type": "object", "required": ["string"], "properties": ["string": ["type": "string"]]],
            ["type": "object", "required": ["date"], "properties": ["date": ["type": "string"]]],
            ["type": "object", "required": ["guid"], "properties": ["guid": ["type": "string", "format": "uuid"]]],
            ["type": "object", "required": ["blob"], "properties": ["blob": ["type": "string", "format": "byte"]]],
        ],
    ] }

    private static var schemas: [String: Any] {
        let values: [String: Any] = ["type": "object", "additionalProperties": value]
        let change: [String: Any] = [
            "type": "object", "required": ["changeId", "type", "oldValues", "newValues", "status", "refreshedValues"],
            "properties": [
                "changeId": ["type": "integer"], "type": ["type": "string", "enum": ["insert", "update", "delete"]],
                "oldValues": values, "newValues": values, "refreshedValues": values,
                "status": ["type": "string", "enum": ["pending", "resolved", "failed"]],
                "message": ["type": "string", "nullable": true], "failure": ["type": "object", "nullable": true],
            ],
        ]
        return [
            "Empty": ["type": "object"],
            "Health": ["type": "object", "required": ["status", "protocol"],
                       "properties": ["status": ["type": "string"], "protocol": ["type": "string"]]],
            "Readiness": ["type": "object", "required": ["status", "checks"], "properties": [
                "status": ["type": "string", "enum": ["ready", "notReady"]],
                "checks": ["type": "array", "items": ["type": "object", "required": ["name", "ready"], "properties": [
                    "name": ["type": "string"], "ready": ["type": "boolean"], "problem": ["type": "string"], "rulesVersion": ["type": "string"],
                ]]],
            ]],
            "Error": ["type": "object", "required": ["error"], "properties": ["error": [
                "type": "object", "required": ["code", "message"],
                "properties": ["code": ["type": "string"], "message": ["type": "string"], "table": ["type": "string"],
                               "field": ["type": "string"], "location": ["type": "string"], "event": ["type": "string"]],
            ]]],
            "LoginRequest": ["type": "object", "required": ["loginString"], "properties": ["loginString": ["type": "string"]]],
            "LoginAnswer": ["type": "object", "required": ["token", "session"],
                            "properties": ["token": ["type": "string"], "session": ["type": "object"],
                                           "admin": ["type": "boolean", "description": "True when the session may call AdminService"]]],
            "AdminOverview": ["type": "object", "required": ["server", "domain", "health", "sessions", "refusals"], "properties": [
                "server": ["type": "object", "required": ["protocol", "started", "uptimeSeconds"],
                           "properties": ["protocol": ["type": "string"], "started": ["type": "string", "format": "date-time"], "uptimeSeconds": ["type": "integer"]]],
                "domain": ["type": "string"],
                "health": ref("Readiness"),
                "sessions": ["type": "array", "items": ["type": "object", "required": ["user", "domain", "roles", "started", "expires", "ends"], "properties": [
                    "user": ["type": "string"], "domain": ["type": "string"], "roles": ["type": "array", "items": ["type": "string"]],
                    "started": ["type": "string", "format": "date-time"], "expires": ["type": "string", "format": "date-time"],
                    "ends": ["type": "string", "format": "date-time"]]]],
                "refusals": ["type": "array", "items": ["type": "object", "required": ["at", "kind", "message"], "properties": [
                    "at": ["type": "string", "format": "date-time"], "user": ["type": "string"], "domain": ["type": "string"],
                    "service": ["type": "string"], "requestId": ["type": "string"], "kind": ["type": "string"], "message": ["type": "string"],
                    "table": ["type": "string"], "row": ["type": "string"], "event": ["type": "string"], "file": ["type": "string"],
                    "line": ["type": "integer"], "column": ["type": "integer"]]]],
            ]],
            "SchemaAnswer": ["type": "object", "required": ["schema", "version"],
                             "properties": ["schema": ["type": "object"], "version": ["type": "string"],
                                            "allowed": ["type": "object", "description": "The operations the caller may make, by table",
                                                        "additionalProperties": ["type": "array", "items": ["type": "string", "enum": ["read", "insert", "update", "delete"]]]],
                                            "rolesAllowed": ["type": "object", "description": "For each operation the caller may not make, the roles that may, by table",
                                                             "additionalProperties": ["type": "object", "additionalProperties": ["type": "array", "items": ["type": "string"]]]]]],
            "DataRequest": ["type": "object", "required": ["table"], "properties": [
                "table": ["type": "string"], "sql": ["type": "string", "nullable": true],
                "fields": ["type": "array", "items": ["type": "string"], "nullable": true],
                "where": ["type": "string", "nullable": true], "parameters": values,
                "maxRecords": ["type": "integer", "nullable": true],
            ]],
            "SQLGetDataRequest": ["type": "object", "required": ["sql"], "properties": [
                "sql": ["type": "string"], "parameters": values, "maxRecords": ["type": "integer", "nullable": true],
                "name": ["type": "string", "nullable": true],
            ]],
            "GetDataRequest": ["type": "object", "required": ["requests"], "properties": [
                "requests": ["type": "array", "items": ref("DataRequest")], "includeSchema": ["type": "boolean", "nullable": true],
            ]],
            "GetDataAnswer": ["type": "object", "required": ["tables"], "properties": [
                "tables": ["type": "array", "items": ["type": "object", "required": ["name", "fields", "rows"]]], "schema": ["type": "object"],
                // Present only when the read failed after the answer began (the tables are then incomplete).
                "error": ["type": "object", "required": ["code", "message"]],
            ]],
            "Delta": ["type": "object", "required": ["tableName", "keyFields", "loggedFields", "changes"], "properties": [
                "tableName": ["type": "string"], "keyFields": ["type": "array", "items": ["type": "string"]],
                "loggedFields": ["type": "array", "items": ["type": "string"]], "changes": ["type": "array", "items": change],
            ]],
            "UpdateDataMessage": ["type": "object", "required": ["deltas"], "properties": [
                "apply": ["type": "object", "required": ["id", "madeAt"], "description": "The batch's apply id: a repeat gets the first answer and applies nothing",
                          "properties": ["id": ["type": "string", "minLength": 1, "maxLength": ApplyId.maximumLength, "pattern": "^[A-Za-z0-9._:-]+$"],
                                         "madeAt": ["type": "integer", "minimum": 0, "description": "When the client made the id, seconds since 1970"]]],
                "deltas": ["type": "array", "items": ref("Delta")],
            ]],
            "CommandRequest": ["type": "object", "required": ["command"], "properties": ["command": ["type": "string"], "parameters": values]],
            "CommandAnswer": ["type": "object", "required": ["result", "deltas"],
                              "properties": ["result": value, "deltas": ["type": "array", "items": ref("Delta")]]],
        ]
    }
}

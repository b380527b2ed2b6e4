internal import CJavaScriptCore
import Relata

extension RuleRuntime {
    /// Whether any loaded script handles `event` (a server skips firing an event nobody handles).
    ///
    /// ```swift
    /// if runtime.handles(.beforeGetData) { try runtime.fireDataEvent(.beforeGetData, requests: requests) }
    /// ```
    public func handles(_ event: RuleEvent) -> Bool {
        allScripts.contains { $0.handler(event.handlerName) != nil }
    }

    /// Runs a data event — `beforeGetData(names, requests)` or `afterGetData(names, requests)` —
    /// in every script that handles it, the schema-wide one first. Each request is
    /// `{ tableName, sql, where, parameters, fields, maxRecords }` in the scripts. A `fail()` in
    /// `beforeGetData` refuses the read: the error is thrown.
    ///
    /// ```swift
    /// try runtime.fireDataEvent(.beforeGetData, requests: [DataRequest(table: "Clients")])
    /// ```
    public func fireDataEvent(_ event: RuleEvent, requests: [DataRequest]) throws {
        for script in allScripts where script.handler(event.handlerName) != nil {
            try fire(event, in: script, table: script.table) { context, arguments in
                arguments.append(context.makeArray(requests) { context.string($0.table) })
                arguments.append(try context.makeArray(requests) { request in
                    let object = context.makeObject()
                    context.setProperty("tableName", of: object, to: context.string(request.table))
                    context.setProperty("sql", of: object, to: request.sql.map { context.string($0) } ?? JSValueMakeNull(context.ref))
                    context.setProperty("where", of: object, to: request.where.map { context.string($0) } ?? JSValueMakeNull(context.ref))
                    context.setProperty("parameters", of: object, to: try context.object(from: request.parameters))
                    context.setProperty("fields", of: object, to: request.fields.map { names in context.makeArray(names) { context.string($0) } }
                                        ?? JSValueMakeNull(context.ref))
                    context.setProperty("maxRecords", of: object, to: request.maxRecords.map { JSValueMakeNumber(context.ref, Double($0)) }
                                        ?? JSValueMakeNull(context.ref))
                    return object
                })
            }
        }
    }
}

extension RuleRuntime {
    /// Runs `afterLogin(login)` in the schema-wide scripts (the shared one, then the server-only
    /// one), where a data server lets rules shape a new session: `login.user`, and `login.values`
    /// and `login.roles` to change. A `fail()` refuses the login (the error is thrown).
    ///
    /// ```js
    /// function afterLogin(login) {
    ///     if (login.user === 'ann') login.roles.push('Auditor');
    ///     login.values.Region = 'EU';
    /// }
    /// ```
    /// - Returns: the session as the script left it (unchanged without a handler).
    public func afterLogin(user: String, session: Session) throws -> Session {
        var session = session
        for script in schemaScripts where script.handler(RuleEvent.afterLogin.handlerName) != nil {
            session = try afterLogin(in: script, user: user, session: session)
        }
        return session
    }

    private func afterLogin(in script: CompiledScript, user: String, session: Session) throws -> Session {
        let context = script.context
        let login = context.makeObject()
        // Read again after the handler ran: kept alive until then.
        JSValueProtect(context.ref, login)
        defer { JSValueUnprotect(context.ref, login) }
        context.setProperty("user", of: login, to: context.string(user), readOnly: true)
        context.setProperty("values", of: login, to: try context.object(from: session.values))
        context.setProperty("roles", of: login, to: context.makeArray(session.roles) { context.string($0) })
        try fire(.afterLogin, in: script, table: nil) { _, arguments in arguments.append(login) }
        let values = try context.dictionary(from: context.property("values", of: login), fields: nil)
        let rolesValue = context.property("roles", of: login)
        guard JSValueIsArray(context.ref, rolesValue), let roles = JSValueToObject(context.ref, rolesValue, nil) else {
            throw ScriptError(.runtime, "afterLogin: login.roles must stay an array of role names", file: script.script.fileName, event: "afterLogin")
        }
        let names = try (0..<min(context.length(of: roles), 1000)).map { index -> String in
            guard let name = JSString.string(of: context.element(index, of: roles), in: context.ref),
                  JSValueIsString(context.ref, context.element(index, of: roles)) else {
                throw ScriptError(.runtime, "afterLogin: login.roles[\(index)] is not a string", file: script.script.fileName, event: "afterLogin")
            }
            return name
        }
        return Session(values: values, roles: names)
    }
}

extension RuleRuntime {
    /// Runs a command: its function in the schema-wide script, with the parameters as a plain
    /// object. What it changes through `lda` goes through the tables' rules like any edit.
    ///
    /// ```js
    /// function closeOrder(parameters) {
    ///     lda.update('Orders', parameters.orderId, { Status: 'closed' });
    ///     return 'closed';
    /// }
    /// ```
    /// - Returns: what the function returned, as a field value (NULL for anything else).
    /// - Throws: the function's ``ScriptError`` (a `fail()` refuses the command).
    public func runCommand(_ command: CommandDefinition, parameters: [String: Value]) throws -> Value {
        guard let script = commandScript(for: command), let function = script.handler(command.function) else {
            throw ScriptError(.runtime, "the command \(command.name) names the function \(command.function), which the schema-wide scripts do not define")
        }
        let context = script.context
        do {
            let returned = try RuleScope.run { try context.call(function) { $0.append(try context.object(from: parameters)) } }
            if context.isPromise(returned) { throw Self.asyncHandler(command.function) }
            return (try? context.value(from: returned)) ?? .null
        } catch var error as ScriptError {
            error = script.locatingFailCall(error)
            error.event = error.event ?? command.name
            if error.file == nil { error.file = script.script.fileName }
            throw error
        }
    }
}

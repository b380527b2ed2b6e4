internal import CJavaScriptCore
import Relata

extension RuleRuntime {
    /// Runs a data event — `beforeGetData(names, requests)` or `afterGetData(names, requests)` —
    /// in every script that handles it, the schema-wide one first. Each request is
    /// `{ tableName, where, parameters, fields, maxRecords }` in the scripts. A `fail()` in
    /// `beforeGetData` refuses the read: the error is thrown.
    ///
    /// ```swift
    /// try runtime.fireDataEvent(.beforeGetData, requests: [DataRequest(table: "Clients")])
    /// ```
    public func fireDataEvent(_ event: RuleEvent, requests: [DataRequest]) throws {
        for script in allScripts where script.handler(event.handlerName) != nil {
            try fire(event, in: script, table: script.table) { context in
                let objects = try requests.map { request -> JSValueRef in
                    let object = context.makeObject()
                    context.setProperty("tableName", of: object, to: context.string(request.table))
                    context.setProperty("where", of: object, to: request.where.map { context.string($0) } ?? JSValueMakeNull(context.ref))
                    context.setProperty("parameters", of: object, to: try context.object(from: request.parameters))
                    context.setProperty("fields", of: object, to: request.fields.map { names in context.makeArray(names.map { context.string($0) }) }
                                        ?? JSValueMakeNull(context.ref))
                    context.setProperty("maxRecords", of: object, to: request.maxRecords.map { JSValueMakeNumber(context.ref, Double($0)) }
                                        ?? JSValueMakeNull(context.ref))
                    return object
                }
                return [context.makeArray(requests.map { context.string($0.table) }), context.makeArray(objects)]
            }
        }
    }
}

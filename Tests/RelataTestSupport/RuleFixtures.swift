import Foundation
import Logging
import Relata
import RelataScript

public let orderFields = [
    FieldDefinition("OrderId", .autoInc, primaryKey: true),
    FieldDefinition("ClientId", .integer, required: true),
    FieldDefinition("Status", .string, size: 10),
]
public let detailFields = [
    FieldDefinition("DetailId", .autoInc, primaryKey: true),
    FieldDefinition("OrderId", .integer, required: true),
    FieldDefinition("Product", .string, size: 30),
    FieldDefinition("Quantity", .integer),
    FieldDefinition("UnitPrice", .currency),
]
public let clientFields = [
    FieldDefinition("ClientId", .integer, primaryKey: true),
    FieldDefinition("Name", .string, size: 40, required: true),
    FieldDefinition("CreditLimit", .currency),
]

/// An adapter with Clients, Orders and OrderDetails, and the given scripts.
public func makeAdapter(details: String? = nil, orders: String? = nil, clients: String? = nil, schema: String? = nil,
                 logger: Logger = Logger(label: "test")) throws -> LocalDataAdapter {
    let adapter = try LocalDataAdapter(engine: ScriptEngine(timeLimit: .milliseconds(300)), logger: logger)
    try adapter.addTable(name: "Clients", fields: clientFields, csv: "ClientId,Name,CreditLimit\n1,Acme,1000\n2,Globex,50\n",
                         script: clients.map { RuleScript($0, fileName: "Clients.js") })
    try adapter.addTable(name: "Orders", fields: orderFields, csv: "OrderId,ClientId,Status\n10,1,open\n11,2,open\n",
                         script: orders.map { RuleScript($0, fileName: "Orders.js") })
    try adapter.addTable(name: "OrderDetails", fields: detailFields,
                         csv: "DetailId,OrderId,Product,Quantity,UnitPrice\n100,10,Widget,2,9.99\n101,10,Gadget,1,24.50\n102,11,Widget,5,9.99\n",
                         script: details.map { RuleScript($0, fileName: "OrderDetails.js") })
    if let schema { try adapter.setSchemaScript(RuleScript(schema, fileName: "schema.js")) }
    return adapter
}

/// Collects what scripts log.
// @unchecked Sendable: `entries` is read and written only while `lock` is held.
public final class LogRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [(message: String, metadata: Logger.Metadata)] = []

    public init() {}

    public var messages: [String] { lock.withLock { entries.map(\.message) } }
    public var metadata: [Logger.Metadata] { lock.withLock { entries.map(\.metadata) } }

    public func append(_ message: String, _ metadata: Logger.Metadata) { lock.withLock { entries.append((message, metadata)) } }

    public var logger: Logger {
        Logger(label: "rules") { _ in Handler(recorder: self) }
    }

    struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            // The logger's own metadata (a request's id, its user) with the event's.
            recorder.append(event.message.description, metadata.merging(event.metadata ?? [:]) { _, event in event })
        }
    }
}

/// A schema written to a temporary folder (with the files it names), removed when the value goes.
public final class TemporarySchema {
    public let folder: URL
    public let url: URL

    public init(_ json: String, files: [String: String] = [:]) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("relata-schema-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (name, text) in files {
            let file = folder.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: file)
        }
        url = folder.appendingPathComponent("s.schema.json")
        try Data(json.utf8).write(to: url)
    }

    deinit { try? FileManager.default.removeItem(at: folder) }
}

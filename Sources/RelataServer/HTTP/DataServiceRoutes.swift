import Foundation
import Hummingbird
import NIOCore
import Relata

/// A `DataService` (`DataService.<Schema>`): routes reached only with a session
/// (``SessionMiddleware``), each reading the body its message needs — a small one for the schema,
/// requests and parameters for reads and commands (``ServerConfiguration/maxQueryBodyBytes``), the
/// changes themselves for an apply (``ServerConfiguration/maxBodyBytes``).
struct DataServiceRoutes {
    let configuration: ServerConfiguration

    /// The rules version a client validated its changes with (`X-Relata-Rules-Version`).
    static let rulesVersionHeader = "x-relata-rules-version"

    func add(to group: RouterGroup<SessionContext>) {
        group.post("GetSchema", use: getSchema)
        group.post("GetData", use: getData)
        group.post("SQLGetData", use: sqlGetData)
        group.post("UpdateData", use: updateData)
        group.post("ExecuteCommand", use: executeCommand)
        group.post(":method") { _, context -> Response in
            throw ProtocolError.notFound("DataService has no method '\(context.parameters.get("method") ?? "")' (methods: GetSchema, GetData, UpdateData, ExecuteCommand, SQLGetData)")
        }
    }

    @Sendable func getSchema(_ request: Request, context: SessionContext) async throws -> Response {
        _ = try await context.body(of: request, limit: configuration.maxBodyBytesBeforeSession, within: configuration.bodyTimeout)
        let service = context.dataService, session = context.session
        let (schema, version) = service.versionedSchema
        var response = try RelataHTTPServer.json(ProtocolMessages.SchemaAnswer(
            schema: schema, version: version, allowed: service.permissions.allowedOperations(of: schema, for: session),
            rolesAllowed: service.permissions.rolesAllowedForRefusedOperations(of: schema, for: session)))
        response.headers[Self.acceptPost] = Self.deltaForms
        return response
    }

    /// `Accept-Post` (W3C LDP): the forms an UpdateData body may take, on the answers a client
    /// reads before and while it applies (GetSchema, UpdateData), so a client sends the binary
    /// form only to a server that reads it.
    static let acceptPost = HTTPFields.Element.Name("Accept-Post")!
    static let deltaForms = "application/json, \(DeltaBinary.contentType)"

    @Sendable func getData(_ request: Request, context: SessionContext) async throws -> Response {
        let message = try await context.message(of: request, limit: configuration.maxQueryBodyBytes, within: configuration.bodyTimeout,
                                                reading: ProtocolMessages.GetDataRequest.read)
        let read = try await context.dataService.checkRead(message.requests, session: context.session)
        let (schema, version) = context.dataService.versionedSchema
        return try await GetDataAnswer.response(for: read, from: context.dataService,
                                                schema: message.includeSchema == true ? .init(schema: schema, version: version) : nil,
                                                binary: Self.wantsRowStream(request), writeTimeout: configuration.writeTimeout, context: context)
    }

    @Sendable func sqlGetData(_ request: Request, context: SessionContext) async throws -> Response {
        let message = try await context.message(ProtocolMessages.SQLGetDataRequest.self, of: request, limit: configuration.maxQueryBodyBytes,
                                                within: configuration.bodyTimeout)
        let read = try await context.dataService.checkRead([message.dataRequest], session: context.session)
        return try await GetDataAnswer.response(for: read, from: context.dataService, schema: nil, binary: Self.wantsRowStream(request),
                                                writeTimeout: configuration.writeTimeout, context: context)
    }

    @Sendable func updateData(_ request: Request, context: SessionContext) async throws -> Response {
        let body = try await context.body(of: request, limit: configuration.maxBodyBytes, within: configuration.bodyTimeout)
        let validated = request.headers.first(where: { $0.name.canonicalName == Self.rulesVersionHeader })?.value
        let message: (apply: ApplyId?, deltas: [Delta])
        do {
            message = try Self.sendsBinaryDeltas(request) ? DeltaBinary.decodeRequest(body) : DeltaJSON.decodeRequest(body)
        } catch let error as RelataError where error.code == .invalidDelta {
            throw ProtocolError.badRequest(error.message)
        }
        let (apply, deltas) = message
        let processed = try await context.dataService.updateData(deltas, session: context.session, apply: apply, rulesVersion: validated)
        context.record.noteChanges(of: processed)
        let minimal = PreferHeader.asksForMinimalReturn(request.headers)
        let binary = request.headers[.accept]?.contains(DeltaBinary.contentType) == true
        var headers: HTTPFields = [.contentType: binary ? DeltaBinary.contentType : "application/json; charset=utf-8",
                                   .vary: "\(PreferHeader.name.rawName), Accept", Self.acceptPost: Self.deltaForms]
        if minimal { headers[PreferHeader.applied] = PreferHeader.minimalReturn }
        let answer = binary ? try DeltaBinary.encode(processed, minimal: minimal) : try DeltaJSON.encode(processed, minimal: minimal)
        // The request's changes and their answer are freed meanwhile, not before the answer goes.
        let changes = processed.changeCount
        FreedMeanwhile.free((consume deltas, consume processed), coveringChanges: changes)
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer)))
    }

    /// Whether an UpdateData request's body is in the binary form (`Content-Type`); JSON otherwise.
    private static func sendsBinaryDeltas(_ request: Request) -> Bool {
        request.headers[.contentType]?.lowercased().hasPrefix(DeltaBinary.contentType) == true
    }

    @Sendable func executeCommand(_ request: Request, context: SessionContext) async throws -> Response {
        let message = try await context.message(ProtocolMessages.CommandRequest.self, of: request, limit: configuration.maxQueryBodyBytes,
                                                within: configuration.bodyTimeout)
        let (result, deltas) = try await context.dataService.executeCommand(message.command, parameters: message.parameters ?? [:], session: context.session)
        context.record.noteChanges(of: deltas)
        return try RelataHTTPServer.json(ProtocolMessages.CommandAnswer(result: result, deltas: deltas))
    }

    /// Whether the client asked for the binary row stream (`Accept`).
    private static func wantsRowStream(_ request: Request) -> Bool {
        request.headers[.accept]?.contains(RowStream.contentType) == true
    }
}

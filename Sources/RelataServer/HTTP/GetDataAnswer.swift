import Foundation
import Hummingbird
import Logging
import Relata

/// The streamed answer to `GetData`: rows are encoded batch by batch as they are read and
/// written to the client as they are encoded, in the binary row stream (``RowStream``, when
/// the request accepts `application/vnd.relata.rows`) or in JSON (tools, curl) — one
/// reading path, two encodings.
///
/// The status is decided by the first chunk: an error before it (a missing parameter, an
/// expression that fails on the first rows, a query past its time limit) is an HTTP error
/// answer; an error after it ends the stream with an error (a row stream's error frame, a
/// JSON answer's `error` member). A client that stops reading for `writeTimeout` loses its
/// connection; one that goes cancels the read. An answer whose first chunk is all of it (under
/// 64 KiB) goes out whole, with its `Content-Length`; a longer one is sent chunked as it is read.
enum GetDataAnswer {
    static func response(for read: DataService.CheckedRead, from service: DataService, schema: ProtocolMessages.SchemaAnswer?,
                         binary: Bool, writeTimeout: Duration, context: some ConnectionContext) async throws -> Response {
        let logger = context.logger
        let encoder: any AnswerEncoder = binary ? BinaryAnswerEncoder() : JSONAnswerEncoder()
        let start = try encoder.start(schema: schema)
        let limit = context.workLimit(service.queryTimeLimit)
        // A reader waits for room at most the write timeout (and not after the client went),
        // even when the answer's body is never written.
        let pipe = ChunkPipe(capacity: 8, patience: writeTimeout, isAbandoned: { limit.isCancelled })
        // The reader: ends when the read does, or when the pipe is closed (the client went).
        Task {
            // Frames are gathered into chunks of at least `chunkBytes`: a small answer goes out in
            // one write, a large one in a few hundred kilobytes at a time.
            let output = Output(start)
            logger.debug("a read began")
            do {
                try await service.stream(read, limit: limit) { event in
                    if case .tableEnd(let rows) = event { context.record.noteRowsRead(rows) }
                    if let chunk = output.add(try encoder.encode(event), atLeast: chunkBytes) { try pipe.send(chunk) }
                }
                pipe.finish(sending: output.rest(try encoder.end()))
            } catch is CancellationError {
                if limit.isCancelled { logger.info("a read was stopped: its client went") }
                pipe.finish(throwing: CancellationError())
            } catch {
                if !output.sentAny {
                    pipe.finish(throwing: error)   // nothing sent: the handler answers with the error
                } else {
                    let (_, answer, _) = ProtocolErrorAnswer.answer(for: error, logger: logger)
                    context.record.note { $0.errorCode = answer.error.code }
                    logger.notice("GetData failed after its answer began; the answer ends with the error: \(answer.error.message)")
                    pipe.finish(sending: output.rest(encoder.failure(answer)))
                }
            }
        }
        let first: [UInt8]?
        do {
            first = try await pipe.next()
        } catch {
            pipe.close()
            throw error
        }
        let contentType = binary ? RowStream.contentType : "application/json; charset=utf-8"
        if let first, pipe.isDrained {
            // The whole answer in one chunk: sent with its length, in one write.
            return Response(status: .ok, headers: [.contentType: contentType], body: ResponseBody(byteBuffer: ByteBuffer(bytes: first)))
        }
        context.record.note { $0.answerStreams = true }
        let body = ResponseBody { writer in
            do {
                var chunk = first
                while let bytes = chunk {
                    try await context.writing(within: writeTimeout) { try await writer.write(ByteBuffer(bytes: bytes)) }
                    chunk = try await pipe.next()
                }
            } catch {
                pipe.close()
                throw error
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [.contentType: contentType], body: body)
    }
}

/// The smallest chunk written to the client while an answer streams.
private let chunkBytes = 64 << 10

/// The bytes encoded and not sent yet.
private final class Output: @unchecked Sendable {
    // @unchecked Sendable: one read's events come one at a time, in order; `sentAny` is read
    // after the read ended.
    private var bytes: [UInt8]
    /// Whether a chunk went to the client already (an error then ends the stream, not the status).
    private(set) var sentAny = false

    init(_ start: [UInt8]) { bytes = start }

    /// Adds bytes; returns everything gathered once it reaches `size`.
    func add(_ more: [UInt8], atLeast size: Int) -> [UInt8]? {
        bytes += more
        guard bytes.count >= size else { return nil }
        defer { bytes = []; sentAny = true }
        return bytes
    }

    /// Everything gathered, with the last bytes.
    func rest(_ last: [UInt8]) -> [UInt8] {
        defer { bytes = [] }
        return bytes + last
    }
}

/// Turns a read's events into the bytes of one encoding. An encoder is used by one read,
/// one event at a time, in order.
private protocol AnswerEncoder: AnyObject, Sendable {
    func start(schema: ProtocolMessages.SchemaAnswer?) throws -> [UInt8]
    func encode(_ event: RowStreamEvent) throws -> [UInt8]
    func end() throws -> [UInt8]
    /// The bytes that end the answer with an error, after whatever was sent.
    func failure(_ answer: ProtocolMessages.ErrorAnswer) -> [UInt8]
}

private final class BinaryAnswerEncoder: AnswerEncoder {
    func start(schema: ProtocolMessages.SchemaAnswer?) throws -> [UInt8] {
        try RowStreamWriter.start() + (schema.map { try RowStreamWriter.schema(RelataHTTPServer.encode($0)) } ?? [])
    }

    func encode(_ event: RowStreamEvent) throws -> [UInt8] {
        switch event {
        case .table(let name, let fields, let expectedRows):
            return try RowStreamWriter.table(name: name, fields: fields, expectedRows: expectedRows)
        case .rows(let rows): return try RowStreamWriter.rows(rows)
        case .tableEnd(let rows): return try RowStreamWriter.tableEnd(rows: rows)
        case .schema, .end, .error: return []
        }
    }

    func end() -> [UInt8] { RowStreamWriter.end() }

    func failure(_ answer: ProtocolMessages.ErrorAnswer) -> [UInt8] {
        RowStreamWriter.error((try? RelataHTTPServer.encode(answer)) ?? Data())
    }
}

/// `{"tables":[{"name":…,"fields":[…],"rows":[[…],…]},…],"schema":{…}}`, written piece by piece;
/// an error after the answer began closes what is open and adds `"error":{…}` (the protocol's
/// error answer), so the JSON stays whole and says it failed.
private final class JSONAnswerEncoder: AnswerEncoder, @unchecked Sendable {
    // @unchecked Sendable: an encoder serves one read, whose events come one at a time.
    private var schema: Data?
    private var tables = 0
    private var rowsInTable = 0
    private var inTable = false

    func start(schema: ProtocolMessages.SchemaAnswer?) throws -> [UInt8] {
        self.schema = try schema.map(RelataHTTPServer.encode)
        return Array(#"{"tables":["#.utf8)
    }

    func encode(_ event: RowStreamEvent) throws -> [UInt8] {
        switch event {
        case .table(let name, let fields, _):
            defer { tables += 1; rowsInTable = 0; inTable = true }
            let head = #"{"name":"# + String(decoding: try RelataHTTPServer.encode(name), as: UTF8.self)
                + #","fields":"# + String(decoding: try RelataHTTPServer.encode(fields), as: UTF8.self) + #","rows":["#
            return Array(((tables > 0 ? "," : "") + head).utf8)
        case .rows(let rows):
            guard rows.count > 0 else { return [] }
            let json = (0..<rows.count).map { row in rows.values(ofRow: row).map(JSONValue.init) }
            var bytes = Array(try RelataHTTPServer.encode(json).dropFirst().dropLast())
            if rowsInTable > 0 { bytes.insert(UInt8(ascii: ","), at: 0) }
            rowsInTable += rows.count
            return bytes
        case .tableEnd:
            inTable = false
            return Array("]}".utf8)
        case .schema, .end, .error: return []
        }
    }

    func end() -> [UInt8] {
        var bytes = Array("]".utf8)
        if let schema { bytes += Array(#","schema":"#.utf8) + schema }
        return bytes + Array("}".utf8)
    }

    func failure(_ answer: ProtocolMessages.ErrorAnswer) -> [UInt8] {
        let error = (try? RelataHTTPServer.encode(answer.error)) ?? Data(#"{"code":"internal","message":"the answer failed"}"#.utf8)
        return Array(((inTable ? "]}" : "") + #"],"error":"#).utf8) + error + Array("}".utf8)
    }
}

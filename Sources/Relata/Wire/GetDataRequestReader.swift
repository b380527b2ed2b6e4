import Foundation

extension ProtocolMessages.GetDataRequest {
    /// Reads a request from its JSON bytes in one pass, as ``DeltaJSON`` reads UpdateData's:
    /// it builds only the request (Foundation's `JSONDecoder` spent more on one small read's
    /// request than the server spent reading its row). Members other than the message's are
    /// read past; the first of two members with one name counts; a member whose value is
    /// `null` is absent.
    ///
    /// ```swift
    /// let message = try ProtocolMessages.GetDataRequest.read(Data(#"{"requests":[{"table":"Clients"}]}"#.utf8))
    /// ```
    /// - Throws: ``JSONScanner/Failure`` naming where and what: a syntax error with its byte
    ///   offset (`the JSON is not valid at byte 14: …`), else the first member that is not what
    ///   the message asks for (`requests[0].maxRecords: expected a whole number`).
    package static func read(_ bytes: some Collection<UInt8>) throws -> Self {
        if let read = try bytes.withContiguousStorageIfAvailable({ try JSONScanner.message($0) { try $0.getDataRequest() } }) { return read }
        return try Array(bytes).withUnsafeBufferPointer { try JSONScanner.message($0) { try $0.getDataRequest() } }
    }
}

extension JSONScanner {
    fileprivate mutating func getDataRequest() throws -> ProtocolMessages.GetDataRequest {
        skipSpace()
        guard current == UInt8(ascii: "{") else { throw JSONProblem("expected an object") }
        var requests = JSONSlot<[DataRequest]>("requests"), includeSchema = JSONSlot<Bool>("includeSchema")
        try object(depth: 0) { scanner, key in
            if try scanner.key(key, is: "requests") {
                try requests.fill(&scanner, depth: 1) { try $0.list(depth: 1) { try $0.dataRequest(depth: 2) } }
            } else if try scanner.key(key, is: "includeSchema") {
                try includeSchema.fill(&scanner, depth: 1) { try $0.boolean() }
            } else {
                try scanner.validateValue(depth: 1)
            }
        }
        return ProtocolMessages.GetDataRequest(requests: try requests.required(), includeSchema: try includeSchema.optional())
    }

    private mutating func dataRequest(depth: Int) throws -> DataRequest {
        skipSpace()
        guard current == UInt8(ascii: "{") else { throw JSONProblem("expected an object") }
        var table = JSONSlot<String>("table"), sql = JSONSlot<String>("sql"), fields = JSONSlot<[String]>("fields")
        var expression = JSONSlot<String>("where"), parameters = JSONSlot<[String: Value]>("parameters")
        var maxRecords = JSONSlot<Int>("maxRecords")
        try object(depth: depth) { scanner, key in
            let inner = depth + 1
            if try scanner.key(key, is: "table") {
                try table.fill(&scanner, depth: inner) { try $0.protocolString() }
            } else if try scanner.key(key, is: "where") {
                try expression.fill(&scanner, depth: inner) { try $0.protocolString() }
            } else if try scanner.key(key, is: "parameters") {
                try parameters.fill(&scanner, depth: inner) { try $0.values(depth: inner, capacity: 0) }
            } else if try scanner.key(key, is: "fields") {
                try fields.fill(&scanner, depth: inner) { try $0.list(depth: inner) { try $0.protocolString() } }
            } else if try scanner.key(key, is: "maxRecords") {
                try maxRecords.fill(&scanner, depth: inner) { try $0.integer() }
            } else if try scanner.key(key, is: "sql") {
                try sql.fill(&scanner, depth: inner) { try $0.protocolString() }
            } else {
                try scanner.validateValue(depth: inner)
            }
        }
        var request = DataRequest(table: try table.required(), fields: try fields.optional(), where: try expression.optional(),
                                  parameters: try parameters.optional() ?? [:], maxRecords: try maxRecords.optional())
        request.sql = try sql.optional()
        return request
    }
}

import Foundation
import Relata
@testable import RelataServer
import RelataServerTestSupport
import Testing

/// A failure the server did not foresee answers 500 with "internal error" and the request's id,
/// never the error's own text (it can name files, tables and the server's setup); the log has it.
@Suite(.timeLimit(.minutes(5))) struct InternalErrorTests {
    @Test(arguments: StorageBackend.allCases)
    func anInternalErrorAnswersOnlyItsRequestId(backend: StorageBackend) async throws {
        let server = try HTTPProtocolTests.Server(backend: backend)
        // The database loses a table behind the server's back: every read of it fails inside the server.
        _ = try server.database.database.write { connection in
            try connection.execute("DROP TABLE \(backend == .postgres ? "\"AuditLog\"" : "AuditLog")", [])
        }
        try await server.test { client in
            let token = try #require(try await HTTPProtocolTests.login(client))
            let response = try await client.request("/v2/DataService/GetData", body: Data(#"{"requests": [{"table": "AuditLog"}]}"#.utf8), token: token)
            #expect(response.status == 500)
            let error = try HTTPProtocolTests.error(response.body)
            #expect(error.code == "internal")
            let id = try #require(response.header("x-request-id"))
            #expect(error.message == "internal error; the server's log has the detail under request id \(id)")
            let text = String(decoding: response.body, as: UTF8.self)
            #expect(!text.contains("AuditLog") && !text.lowercased().contains("relation") && !text.contains("no such table"), "\(text)")
        }
    }
}

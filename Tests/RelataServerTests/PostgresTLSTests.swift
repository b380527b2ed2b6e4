import Foundation
import Relata
@testable import RelataServer
import RelataServerTestSupport
import Testing

/// TLS to PostgreSQL as libpq's `sslmode` chooses it, against the test cluster, which offers TLS
/// with a self-signed certificate for 127.0.0.1 (`RELATA_POSTGRES_CA`, Scripts/lib/postgres.sh).
@Suite(.timeLimit(.minutes(5))) struct PostgresTLSTests {
    static var certificate: String {
        get throws {
            guard let path = ProcessInfo.processInfo.environment["RELATA_POSTGRES_CA"], !path.isEmpty else {
                throw RelataError(.invalidArgument, "RELATA_POSTGRES_CA is not set: Scripts/lib/postgres.sh sets it when it starts the test cluster")
            }
            return path
        }
    }

    /// Whether the connection a database lends uses TLS, as PostgreSQL sees it.
    static func usesTLS(_ url: String) throws -> Bool {
        let database = try PostgresDatabase(url: url, maxConnections: 1)
        defer { database.close() }
        return try database.read { connection in
            try connection.value("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()", [], reading: FieldDefinition("ssl", .boolean))
        } == .boolean(true)
    }

    @Test func eachSSLModeConnectsAsLibpqWould() throws {
        let (url, drop) = try TestPostgres.makeDatabaseURL()
        defer { drop() }
        let ca = try Self.certificate
        #expect(try Self.usesTLS(url), "prefer, the default, takes the TLS the server offers")
        #expect(try !Self.usesTLS(url + "?sslmode=disable"))
        #expect(try Self.usesTLS(url + "?sslmode=require"))
        #expect(try Self.usesTLS(url + "?sslmode=verify-full&sslrootcert=\(ca)"), "the certificate names 127.0.0.1 and is its own root")
        #expect(try Self.usesTLS(url + "?sslmode=verify-ca&sslrootcert=\(ca)"))
    }

    @Test func aCertificateThatCannotBeVerifiedRefusesTheConnection() throws {
        let (url, drop) = try TestPostgres.makeDatabaseURL()
        defer { drop() }
        // The system's roots do not know the cluster's self-signed certificate.
        #expect(throws: (any Error).self) { try Self.usesTLS(url + "?sslmode=verify-full") }
        do {
            _ = try PostgresDatabase.configuration(from: url + "?sslmode=sometimes")
            Issue.record("an unknown sslmode was accepted")
        } catch let error as RelataError {
            #expect(error.message.contains("not one of disable, prefer, require, verify-ca, verify-full"))
            #expect(!error.message.contains("relata-"), "the password is never repeated")
        }
        #expect(throws: RelataError.self) { try PostgresDatabase.configuration(from: url + "?sslrootcert=/nonexistent/ca.pem") }
        #expect(throws: RelataError.self) { try PostgresDatabase.configuration(from: url + "?sslcompression=1") }
    }
}

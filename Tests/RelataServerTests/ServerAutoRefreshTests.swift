import Foundation
import Relata
@testable import RelataServer
import RelataServerTestSupport
import RelataTestSupport
import Testing

/// Values the database itself sets reach the client.
@Suite(.timeLimit(.minutes(5))) struct ServerAutoRefreshTests {
    /// A trigger upper-cases a name on update; the field is `serverAutoRefresh`, so the answer
    /// carries the stored name and the client's row takes it.
    @Test(arguments: StorageBackend.allCases)
    func aFieldTheDatabaseSetsIsReadAgainAndSentBack(backend: StorageBackend) async throws {
        var fields = clientFields
        fields[1].serverAutoRefresh = true
        let schema = try SchemaDefinition(name: "Shop", tables: [TableDefinition(name: "Clients", fields: fields)])
        let database = try DataServiceTests.Database(schema: schema, backend: backend)
        let trigger = backend == .postgres
            ? [#"CREATE FUNCTION upper_name() RETURNS trigger AS $$ BEGIN NEW."Name" := upper(NEW."Name"); RETURN NEW; END $$ LANGUAGE plpgsql"#,
               #"CREATE TRIGGER upper_name BEFORE UPDATE ON "Clients" FOR EACH ROW EXECUTE FUNCTION upper_name()"#]
            : [#"CREATE TRIGGER upper_name AFTER UPDATE ON "Clients" BEGIN UPDATE "Clients" SET "Name" = upper(NEW."Name") WHERE "ClientId" = NEW."ClientId" AND "Name" <> upper(NEW."Name"); END"#]
        try database.database.write { connection in for statement in trigger { try connection.execute(statement, []) } }

        let clients = try DataTable(name: "Clients", fields: fields, csv: DataServiceTests.clientsCSV)
        try clients.rows[0].setValue("acme renamed", forKey: "Name")
        let answer = try await database.service.updateData([clients.makeDelta()], session: Session())
        #expect(answer[0].changes[0].refreshedValues["Name"] == "ACME RENAMED")
        try clients.accept(answer[0])
        #expect(clients.rows[0]["Name"] == "ACME RENAMED" && clients.rows[0].rowState == .unchanged)
    }
}

import Foundation
import Relata
@testable import RelataServer
import RelataServerTestSupport
import RelataTestSupport
import Testing

/// Hand-made UpdateData requests from a valid login: a request whose deltas could not map
/// back to the client's rows one to one, or whose edits no client makes, is refused whole,
/// before anything runs or is stored — never a crash, never a row stored twice.
@Suite(.timeLimit(.minutes(5))) struct HostileDeltaTests {
    /// A new client, as a delta of its own.
    static func newClient(_ name: String, changeId: Int = 1, key: Int64 = -1) -> DeltaChange {
        DeltaChange(changeId: changeId, type: .insert, newValues: ["ClientId": .integer(key), "Name": .string(name), "CreditLimit": .decimal(10)])
    }

    /// A change carrying edits of the request's choosing.
    static func edited(_ change: DeltaChange, _ edits: [RowEdit]) -> DeltaChange {
        var change = change
        change.edits = edits
        return change
    }

    static func body(_ deltas: [Delta]) throws -> Data {
        Data(try DeltaJSON.encode(deltas))
    }

    @Test func deltasThatCannotMapBackOneToOneAreRefusedWhole() async throws {
        let server = try HTTPProtocolTests.Server()
        let service = server.database.service
        try await server.test { client in
            let token = try #require(try await HTTPProtocolTests.login(client))
            let fields = ["ClientId", "Name", "CreditLimit"]
            func delta(_ changes: [DeltaChange]) -> Delta {
                Delta(tableName: "Clients", keyFields: ["ClientId"], loggedFields: fields, changes: changes)
            }
            let cases: [(String, [Delta], String)] = [
                ("two deltas for one table", [delta([Self.newClient("Twice")]), delta([Self.newClient("Twice", changeId: 2, key: -2)])],
                 "two deltas for the table"),
                ("the identical delta twice", [delta([Self.newClient("Again")]), delta([Self.newClient("Again")])], "two deltas for the table"),
                ("one change id, two temporary keys", [delta([Self.newClient("A"), Self.newClient("B", key: -2)])], "change id 1 appears twice"),
                ("one edit sequence used twice", [delta([Self.edited(Self.newClient("C"), [RowEdit(sequence: 5, kind: .insert, values: ["Name": "C"])]),
                                                          Self.edited(Self.newClient("D", changeId: 2, key: -2), [RowEdit(sequence: 5, kind: .insert, values: ["Name": "D"])])])],
                 "edit sequence 5 is used twice"),
                ("an insert whose first edit deletes nothing yet", [delta([Self.edited(Self.newClient("E"), [RowEdit(sequence: 1, kind: .delete),
                                                                                                               RowEdit(sequence: 2, kind: .update)])])],
                 "can only be update or insert"),
                ("an update that inserts", [delta([Self.edited(DeltaChange(changeId: 1, type: .update, oldValues: ["ClientId": 1], newValues: ["Name": "F"]),
                                                               [RowEdit(sequence: 1, kind: .insert, values: ["Name": "F"])])])],
                 "can only be update"),
                ("edits out of order", [delta([Self.edited(DeltaChange(changeId: 1, type: .update, oldValues: ["ClientId": 1], newValues: ["Name": "G"]),
                                                           [RowEdit(sequence: 9, kind: .update), RowEdit(sequence: 3, kind: .update)])])],
                 "not in rising sequence"),
                ("a delete that sets values", [delta([Self.edited(DeltaChange(changeId: 1, type: .delete, oldValues: ["ClientId": 1]),
                                                                  [RowEdit(sequence: 1, kind: .delete, values: ["Name": "H"])])])],
                 "a delete sets no values"),
                ("a misspelt logged field", [Delta(tableName: "Clients", keyFields: ["ClientId"], loggedFields: ["C:ientId", "Name"],
                                                   changes: [Self.newClient("I")])], "field 'C:ientId', which the table does not have"),
                ("another key", [Delta(tableName: "Clients", keyFields: ["Name"], loggedFields: fields, changes: [Self.newClient("J")])],
                 "the table's key is clientid"),
            ]
            for (what, deltas, words) in cases {
                let answer = try await client.request("/v2/DataService/UpdateData", body: try Self.body(deltas), token: token)
                #expect(answer.status == 400, "\(what)")
                let error = try HTTPProtocolTests.error(answer.body)
                #expect(error.code == "invalidDelta" && error.message.contains(words), "\(what): \(error.message)")
            }
            #expect(try service.storedRows(of: "Clients").count == 2, "nothing was stored")
            // The server still answers.
            let fine = try await client.request("/v2/DataService/UpdateData", body: try Self.body([delta([Self.newClient("Once")])]), token: token)
            #expect(fine.status == 200)
            #expect(try service.storedRows(of: "Clients").count == 3)
        }
    }

    /// Found by the update-data fuzz target: an insert whose delta left its (not auto-increment)
    /// key out of `loggedFields` was stored under a key the database chose, and answered
    /// "resolved" with the client's key. Key fields are always written.
    @Test(arguments: StorageBackend.allCases)
    func anInsertIsStoredUnderItsKeyWhenTheDeltaDoesNotLogTheKey(backend: StorageBackend) async throws {
        let database = try DataServiceTests.Database(backend: backend)
        let delta = Delta(tableName: "Clients", keyFields: ["ClientId"], loggedFields: ["Name", "CreditLimit"],
                          changes: [Self.newClient("Nine", key: 9)])
        let answer = try await database.service.updateData([delta], session: Session())
        #expect(answer.first?.changes.first?.status == .resolved)
        #expect(try database.service.storedRows(of: "Clients").first { $0["ClientId"] == 9 }?["Name"] == "Nine")
    }

    /// Found by the update-data fuzz target: an update whose edits leave the row as stored, but
    /// whose `newValues` claim other values, was answered "resolved" with nothing refreshed — the
    /// client would have kept values the server never stored.
    @Test(arguments: StorageBackend.allCases)
    func anUpdateWhoseEditsChangeNothingIsAnsweredWithTheStoredValues(backend: StorageBackend) async throws {
        let database = try DataServiceTests.Database(backend: backend)
        var change = DeltaChange(changeId: 1, type: .update, oldValues: ["ClientId": 2],
                                 newValues: ["ClientId": 2, "Name": "Claimed", "CreditLimit": .decimal(50)])
        change.edits = [RowEdit(sequence: 1, kind: .update, values: ["CreditLimit": .decimal(50)])]
        let delta = Delta(tableName: "Clients", keyFields: ["ClientId"], loggedFields: ["ClientId", "Name", "CreditLimit"], changes: [change])
        let answer = try await database.service.updateData([delta], session: Session())
        let answered = try #require(answer.first?.changes.first)
        #expect(answered.status == .resolved)
        #expect(answered.refreshedValues["Name"] == "Globex", "the client ends with what is stored: \(answered.refreshedValues)")
        #expect(try database.service.storedRows(of: "Clients").first { $0["ClientId"] == 2 }?["Name"] == "Globex")
    }
}

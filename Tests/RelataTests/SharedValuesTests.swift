import Foundation
import Testing
@testable import Relata

/// `makeDelta(sharingValuesWith:)`: a data server's delta of the changes it replayed takes the
/// sent values themselves where it made the same values, and makes its own elsewhere.
@Suite(.timeLimit(.minutes(1))) struct SharedValuesTests {
    @Test func valuesMadeAsSentAreTheSentDictionariesAndOthersTheServersOwn() throws {
        let client = try makeClients(), server = try makeClients()
        try client.rows[0].setValue("Acme Ltd", forKey: "ClientName")
        try client.rows[1].setValue(0.2, forKey: "ClientDiscount")
        let sent = try client.makeDelta()
        try server.rows[0].setValue("Acme Ltd", forKey: "ClientName")
        try server.rows[1].setValue(0.25, forKey: "ClientDiscount")   // the server's rules made another value
        let made = try server.makeDelta(sharingValuesWith: sent)
        #expect(made == (try server.makeDelta()), "sharing changed what the delta says")
        #expect(made.changes[0].oldValues.isSameStorage(as: sent.changes[0].oldValues))
        #expect(made.changes[0].newValues.isSameStorage(as: sent.changes[0].newValues))
        #expect(made.changes[1].oldValues.isSameStorage(as: sent.changes[1].oldValues))
        #expect(!made.changes[1].newValues.isSameStorage(as: sent.changes[1].newValues))
        #expect(made.changes[1].newValues["ClientDiscount"] == 0.25)
    }

    @Test func valuesEqualButNotAlikeOnTheWireAreNotShared() throws {
        let client = try makeClients(), server = try makeClients()
        try client.rows[2].setValue("Initech Inc", forKey: "ClientName")
        try client.rows[0].setValue("Acme Ltd", forKey: "ClientName")
        var sent = try client.makeDelta()
        #expect(server.rows[2]["ClientDiscount"] == .double(0.0))
        sent.changes[0].oldValues["ClientDiscount"] = .double(-0.0)   // == 0.0, another value on the wire
        sent.changes[1].newValues["Unknown"] = .integer(1)             // a name the table does not have
        try server.rows[2].setValue("Initech Inc", forKey: "ClientName")
        try server.rows[0].setValue("Acme Ltd", forKey: "ClientName")
        let made = try server.makeDelta(sharingValuesWith: sent)
        let discount = try #require(made.changes[0].oldValues["ClientDiscount"]?.doubleValue)
        #expect(discount.sign == .plus, "the sent -0.0 replaced the server's 0.0")
        #expect(made.changes[0].newValues.isSameStorage(as: sent.changes[0].newValues))
        #expect(made.changes[1].newValues["Unknown"] == nil)
        #expect(made == (try server.makeDelta()))
    }

    @Test func changesAreMatchedByIdWhereverTheSentDeltaHasThem() throws {
        let client = try makeClients(), server = try makeClients()
        for row in client.rows { try row.setValue("Renamed", forKey: "ClientName") }
        var sent = try client.makeDelta()
        sent.changes.reverse()
        sent.changes.removeLast()   // the first change was not sent
        for row in server.rows { try row.setValue("Renamed", forKey: "ClientName") }
        let made = try server.makeDelta(sharingValuesWith: sent)
        #expect(made == (try server.makeDelta()))
        #expect(made.changes[2].newValues.isSameStorage(as: sent.changes[0].newValues))
        #expect(made.changes[1].newValues.isSameStorage(as: sent.changes[1].newValues))
        #expect(!sent.changes.contains { $0.newValues.isSameStorage(as: made.changes[0].newValues) })
    }
}

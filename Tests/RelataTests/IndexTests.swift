import Foundation
import Testing
@testable import Relata

@Suite struct IndexTests {
    @Test func indexFollowsEveryChange() throws {
        let clients = try makeClients()
        let index = try clients.index(forField: "ClientName")
        #expect(index.row(for: "Acme")?["ClientId"] == 1)
        try clients.rows[0].setValue("Acme Ltd", forKey: "ClientName")
        #expect(index.row(for: "Acme") == nil)
        #expect(index.row(for: "Acme Ltd")?["ClientId"] == 1)
        try clients.rows[0].cancel()
        #expect(index.row(for: "Acme")?["ClientId"] == 1)
        try clients.removeRow(clients.rows[1])
        #expect(index.row(for: "Globex") == nil)
        try clients.cancelAllChanges()
        #expect(index.row(for: "Globex") != nil)
        let added = try clients.addNewRow(values: ["ClientName": "Acme"])
        #expect(index.rows(for: "Acme").count == 2)
        try clients.cancelChange(for: added)
        #expect(index.rows(for: "Acme").count == 1)
    }

    @Test func indexCoercesTheKey() throws {
        let clients = try makeClients()
        #expect(try clients.index(forField: "ClientDiscount").rows(for: 0).count == 1, "integer 0 finds Float 0.0")
        #expect(try clients.index(forField: "ClientId").row(for: "x") == nil)
        #expect(relataError { _ = try clients.index(forField: "Nope") }?.code == .unknownField)
    }
}

import Foundation
import Testing
@testable import Relata

/// The logical schema every site shares, and its version hash.
@Suite struct SchemaDefinitionTests {
    @Test func sha256MatchesTheStandardVectors() {
        #expect(SHA256.hex(of: []) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(of: Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex(of: Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(SHA256.hex(of: [UInt8](repeating: 0x61, count: 1_000_000)) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// A digest given its bytes in parts of every awkward size — less than a block, a block and
    /// one more, several blocks — is the digest of the whole.
    @Test func sha256InPartsIsTheDigestOfTheWhole() {
        let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 7) }
        for sizes in [[1], [63], [64], [65], [1, 62, 2, 129], [1000], [9_999, 1]] {
            var digest = SHA256.Running()
            var offset = 0, next = 0
            while offset < bytes.count {
                let size = min(sizes[next % sizes.count], bytes.count - offset)
                bytes[offset..<offset + size].withUnsafeBytes { digest.update($0) }
                offset += size
                next += 1
            }
            #expect(digest.hex() == SHA256.hex(of: bytes), "parts of \(sizes)")
        }
        var empty = SHA256.Running()
        empty.update(UnsafeRawBufferPointer(start: nil, count: 0))
        #expect(empty.hex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    func shop(ordersScript: String = "function beforePost(row) {}") throws -> SchemaDefinition {
        try SchemaDefinition(name: "Shop", tables: [
            TableDefinition(name: "Clients", fields: [FieldDefinition("ClientId", .integer, primaryKey: true), FieldDefinition("Name", .string)]),
            TableDefinition(name: "Orders", fields: [FieldDefinition("OrderId", .autoInc, primaryKey: true), FieldDefinition("ClientId", .integer)],
                            script: RuleScript(ordersScript, fileName: "Orders.js"), updateRule: UpdateRule(onFailure: .rollbackAll),
                            foreignKeys: [ForeignKeyDefinition(field: "ClientId", references: "Clients", referencedField: "ClientId")]),
        ], updateOrder: ["Clients", "Orders"])
    }

    @Test func theVersionChangesWithTheScriptsAndTheTablesAndNothingElse() throws {
        let version = try shop().version
        #expect(version.hasPrefix("sha256:") && version.count == 71)
        #expect(try shop().version == version, "the same schema has the same version")
        #expect(try shop(ordersScript: "function beforePost(row) { }").version != version, "one space in a script is a new version")
        var renamed = try shop()
        renamed.tables[0].fields[1].name = "ClientName"
        #expect(renamed.version != version)
    }

    @Test func aSchemaCrossesTheWireWhole() throws {
        let schema = try shop()
        let decoded = try JSONDecoder().decode(SchemaDefinition.self, from: JSONEncoder().encode(schema))
        #expect(decoded == schema)
        #expect(decoded.version == schema.version)
        #expect(decoded.table(named: "orders")?.script?.fileName == "Orders.js")
    }

    @Test func brokenReferencesAreRefusedNamingThem() throws {
        let clients = TableDefinition(name: "Clients", fields: [FieldDefinition("ClientId", .integer, primaryKey: true)])
        #expect(throws: RelataError.self) { try SchemaDefinition(name: "S", tables: [clients, clients]) }
        do {
            _ = try SchemaDefinition(name: "S", tables: [clients], updateOrder: ["Clients", "Ordrs"])
            Issue.record("an unknown table in updateOrder was accepted")
        } catch let error as RelataError {
            #expect(error.code == .invalidSchema)
            #expect(error.message.contains("updateOrder names the table 'Ordrs'"))
        }
        let json = #"{"name":"S","tables":[{"name":"A","fields":[],"updateRule":{"onFailure":"applyOthers"},"foreignKeys":[{"field":"x","references":"B","referencedField":"y"}],"lookupFields":[],"calculatedFields":[]}],"updateOrder":["A"]}"#
        #expect(throws: RelataError.self) { try JSONDecoder().decode(SchemaDefinition.self, from: Data(json.utf8)) }
    }
}

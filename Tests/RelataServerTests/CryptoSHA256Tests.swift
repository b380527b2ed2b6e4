import Foundation
import Relata
@testable import RelataServer
import Testing

/// The server's SHA-256 (swift-crypto) gives the digests the core's own code gives: a batch
/// recorded by an older server must still match its fingerprint when it is sent again.
@Suite(.timeLimit(.minutes(1))) struct CryptoSHA256Tests {
    static func hex(_ text: String, parts: Int) -> (core: String, crypto: String) {
        let bytes = Array(text.utf8)
        var core = SHA256.Running(), crypto = CryptoSHA256()
        let size = max(1, bytes.count / max(parts, 1))
        for start in stride(from: 0, to: bytes.count, by: size) {
            bytes[start..<min(start + size, bytes.count)].withUnsafeBytes { part in
                core.update(part)
                crypto.update(part)
            }
        }
        return (core.hex(), crypto.hex())
    }

    @Test func knownDigests() {
        // FIPS 180-4's examples, and the empty text; fed whole and in uneven parts.
        let known = [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
            (String(repeating: "a", count: 1_000_000), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
        ]
        for (text, digest) in known {
            for parts in [1, 3, 7] {
                let (core, crypto) = Self.hex(text, parts: parts)
                #expect(core == digest, "the core's SHA-256 of \(text.prefix(8))… in \(parts) parts")
                #expect(crypto == digest, "swift-crypto's SHA-256 of \(text.prefix(8))… in \(parts) parts")
            }
        }
    }

    /// A batch large enough to be hashed in many parts (the fingerprint hashes 64 KiB at a time),
    /// with every kind of value, edits and changes out of id order.
    @Test func aLargeBatchHasTheSameFingerprintEitherWay() throws {
        var changes: [DeltaChange] = []
        for id in (1...5_000).reversed() {
            let old: FieldValues = ["Id": .integer(Int64(id)), "Name": .string("row \(id) ü"), "Price": .double(Double(id) / 3),
                                        "Total": .decimal(Decimal(id) / 7), "Seen": .date(Date(timeIntervalSinceReferenceDate: Double(id))), "Note": .null]
            var new = old
            new["Name"] = .string("row \(id) edited 😀")
            changes.append(DeltaChange(changeId: id, type: id % 3 == 0 ? .delete : .update, oldValues: old, newValues: id % 3 == 0 ? [:] : new,
                                       edits: id % 2 == 0 ? [RowEdit(sequence: Int64(id), kind: .update, values: ["Name": new["Name"]!])] : nil))
        }
        let deltas = [Delta(tableName: "Rows", keyFields: ["Id"], loggedFields: ["Id", "Name", "Price", "Total", "Seen", "Note"], changes: changes),
                      Delta(tableName: "Empty", keyFields: ["Id"], loggedFields: ["Id"], changes: [])]
        let core = try DeltaFingerprint.of(deltas)
        #expect(try DeltaFingerprint.of(deltas, digest: CryptoSHA256()) == core)
        var other = deltas
        other[0].changes[2_500].newValues["Price"] = .integer(1)
        #expect(try DeltaFingerprint.of(other, digest: CryptoSHA256()) != core)
    }
}
